// Every redistribution between the placements {Replicate, Shard(0), Shard(1), Partial(sum),
// Partial(max), _StridedShard(dim=0, sf=2), _StridedShard(dim=1, sf=3)} on a 1-D mesh of the
// whole world and, with 4 ranks, on a 2x2 mesh (every pair of placement pairs), over MPI process
// groups, for global shapes that shard unevenly (dims of 5 and
// 3 over up to 4 ranks: empty shards included). Each rank builds its source shard from the global
// tensor, runs the planned steps and checks what it holds against its target shard; a Partial
// target is checked by reducing it back to Replicate. Run by distributed_mpi_test.sh under mpirun
// with 1 to 4 ranks; rank 0 prints gtest's output.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/dtensor/redistribute.h"
#include "executor/dtensor/shard_layout.h"
#include "executor/comm/mpi_process_group.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::dist {
namespace {

using exec::ProcessGroup;
using exec::Tensor;

struct MeshGroups {
  Mesh mesh;
  std::vector<int64_t> coordinate;
  std::vector<std::shared_ptr<ProcessGroup>> owned;
  std::vector<ProcessGroup*> groups;
};

MeshGroups make_mesh(std::vector<int64_t> shape, int mesh_id) {
  auto world = exec::mpi_world();
  MeshGroups m;
  m.mesh.shape = shape;
  for (int r = 0; r < world->size; ++r) m.mesh.ranks.push_back(r);
  m.coordinate = *m.mesh.coordinate_of(world->rank);
  for (int64_t d = 0; d < m.mesh.ndim(); ++d) {
    auto ranks = m.mesh.group_ranks(d, m.coordinate);
    auto group = exec::create_mpi_process_group("mesh" + std::to_string(mesh_id) + "." + std::to_string(d), ranks,
                                                100 * mesh_id + static_cast<int>(d));
    EXPECT_TRUE(group) << group.error().message;
    m.owned.push_back(*group);
    m.groups.push_back(group->get());
  }
  return m;
}

Tensor iota(std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(ScalarType::FLOAT32, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i % 23) - 7.0f;
  return t;
}

// Exact comparison of two contiguous f32 tensors.
::testing::AssertionResult same(const Tensor& got, const Tensor& want) {
  if (got.sizes() != want.sizes()) return ::testing::AssertionFailure() << got.type_string() << " vs " << want.type_string();
  Tensor g = exec::contiguous_copy(got), w = exec::contiguous_copy(want);
  for (int64_t i = 0; i < g.numel(); ++i) {
    if (g.data<float>()[i] != w.data<float>()[i]) {
      return ::testing::AssertionFailure() << "element " << i << ": " << g.data<float>()[i] << " vs " << w.data<float>()[i];
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<Placements> all_placements(size_t mesh_ndim) {
  const Placement choices[] = {Placement::replicate(),
                               Placement::shard(0),
                               Placement::shard(1),
                               Placement::partial(),
                               Placement::partial(ReduceOp::MAXIMUM),
                               *parse_placement("_StridedShard(dim=0, sf=2)"),
                               *parse_placement("_StridedShard(dim=1, sf=3)")};
  std::vector<Placements> out{{}};
  for (size_t d = 0; d < mesh_ndim; ++d) {
    std::vector<Placements> next;
    for (const auto& prefix : out) {
      for (const auto& c : choices) {
        next.push_back(prefix);
        next.back().push_back(c);
      }
    }
    out = std::move(next);
  }
  return out;
}

void check_all(const MeshGroups& m, const std::vector<int64_t>& global_sizes) {
  const Tensor global = iota(global_sizes);
  const Placements replicated(m.mesh.shape.size(), Placement::replicate());
  int checked = 0;
  for (const Placements& src : all_placements(m.mesh.shape.size())) {
    auto local = local_from_global(global, src, m.mesh.shape, m.coordinate);
    ASSERT_TRUE(local) << local.error().message;
    for (const Placements& dst : all_placements(m.mesh.shape.size())) {
      const std::string what = to_string(src) + " -> " + to_string(dst) + " of f32" +
                               ::testing::PrintToString(global_sizes);
      auto out = redistribute(*local, global_sizes, src, dst, m.mesh.shape, m.coordinate, m.groups);
      ASSERT_TRUE(out) << what << ": " << out.error().message;
      // A Partial target holds a rank-dependent split of the value: reduce it back.
      auto whole = redistribute(*out, global_sizes, dst, replicated, m.mesh.shape, m.coordinate, m.groups);
      ASSERT_TRUE(whole) << what << ": " << whole.error().message;
      EXPECT_TRUE(same(*whole, global)) << what << " (back to Replicate)";
      bool has_partial = false;
      for (const auto& p : dst) has_partial |= p.is_partial();
      if (!has_partial) {
        auto want = local_from_global(global, dst, m.mesh.shape, m.coordinate);
        EXPECT_TRUE(same(*out, *want)) << what;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(Redistribute, EveryTransitionOnTheWorldMesh) {
  MeshGroups m = make_mesh({exec::mpi_world()->size}, 1);
  check_all(m, {5, 3});
  check_all(m, {8, 4});
  check_all(m, {1, 2});
}

TEST(Redistribute, EveryTransitionOnATwoByTwoMesh) {
  if (exec::mpi_world()->size != 4) GTEST_SKIP() << "needs 4 ranks";
  MeshGroups m = make_mesh({2, 2}, 2);
  check_all(m, {5, 3});
  check_all(m, {4, 6});
}

// torch's redistribute refuses Shard -> Partial; a rule wanting a partial operand (a bias beside
// a rowwise weight) gets it through the whole value: gathered, then kept on group rank 0.
TEST(Redistribute, ShardToPartialGoesThroughReplicate) {
  auto steps = plan_redistribute({Placement::shard(0)}, {Placement::partial()});
  ASSERT_TRUE(steps) << steps.error().message;
  ASSERT_EQ(steps->size(), 2u);
  EXPECT_EQ(to_string((*steps)[0].to), "Replicate()");
  EXPECT_EQ(to_string((*steps)[1].to), "Partial(sum)");
  EXPECT_STREQ(step_collective((*steps)[0]), "all_gather");
  EXPECT_STREQ(step_collective((*steps)[1]), "none");
}

}  // namespace
}  // namespace nrt::dist

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (auto s = nrt::exec::init_mpi(); !s.ok()) {
    std::fprintf(stderr, "%s\n", s.error().message.c_str());
    return 2;
  }
  if (nrt::exec::mpi_world()->rank != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  return RUN_ALL_TESTS();
}
