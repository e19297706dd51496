// nrt::Session (session/session.h) on whatever world runs it: alone (a cc_test) and under mpirun
// with 2 and 4 ranks (session_mpi_test.sh). The torch export testdata/torch/mlp (x f32[4,16] ->
// f32[4,8]) runs whole and as a DTensor program sharded by a plan over every rank, with global
// and with local inputs and outputs; every result is checked against torch's own output.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "executor/comm/mpi_process_group.h"
#include "executor/comm/rank_world.h"
#include "io/compare_outputs.h"
#include "io/npy.h"
#include "session/session.h"
#include "tests/runfile.h"

namespace nrt {
namespace {

exec::RankWorld world;

std::string mlp() { return testing::runfile("testdata/torch/mlp/model.pt2"); }

exec::Tensor torch_file(const char* name) {
  auto t = exec::read_npy(testing::runfile(std::string("testdata/torch/mlp/") + name));
  EXPECT_TRUE(t.ok());
  return t.ok() ? *t : exec::Tensor();
}

// Rows [rank * n / size, (rank + 1) * n / size) of a contiguous 2-D f32 tensor: the rank's shard
// of Shard(0) when the size divides n.
exec::Tensor rows_of_rank(const exec::Tensor& global) {
  const int64_t rows = global.sizes()[0] / world.size, cols = global.sizes()[1];
  exec::Tensor local = exec::Tensor::empty(ScalarType::FLOAT32, {rows, cols});
  std::memcpy(local.data<float>(), global.data<float>() + world.rank * rows * cols,
              static_cast<size_t>(rows * cols) * sizeof(float));
  return local;
}

// Batch sharding on a mesh of every rank: x and the output Shard(0), fc2's weight Shard(0) (its
// contraction: a Partial sum, reduced before the output).
SessionOptions sharded(bool local_outputs) {
  SessionOptions options;
  auto plan = dist::parse_shard_plan(R"json({"mesh": {"shape": [)json" + std::to_string(world.size) +
                                     R"json(]}, "inputs": {"x": ["Shard(0)"]}, "parameters": {"fc2.weight": ["Shard(0)"]},
                                        "outputs": {"*": ["Shard(0)"]}})json");
  EXPECT_TRUE(plan.ok()) << plan.error().to_string();
  options.shard_plan = *plan;
  options.local_outputs = local_outputs;
  return options;
}

void expect_close(const exec::NamedOutput& got, const exec::Tensor& expected) {
  const auto* t = std::get_if<exec::Tensor>(&got.value);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->sizes(), expected.sizes());
  const auto comparison = exec::compare_tensors(*t, expected, exec::Tolerance{1e-5, 1e-5});
  EXPECT_TRUE(comparison.ok) << "max abs error " << comparison.max_abs_error;
}

TEST(Session, PlainProgramOnEveryRank) {
  auto session = Session::open(mlp(), world);
  ASSERT_TRUE(session.ok()) << session.error().to_string();
  EXPECT_FALSE((*session)->is_dtensor());
  EXPECT_EQ((*session)->tracing() != nullptr, world.launched());
  auto outputs = (*session)->run({{"x", torch_file("input_0.npy")}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  ASSERT_EQ(outputs->size(), 1u);
  expect_close((*outputs)[0], torch_file("output_0.npy"));
}

// A program already open (nrt.Runner's way in) runs as one opened from its path; frames reserved
// up front are made once.
TEST(Session, OpensAProgramAlreadyOpen) {
  auto file = open_program(mlp());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto session = Session::open(std::move(*file), world);
  ASSERT_TRUE(session.ok()) << session.error().to_string();
  ASSERT_TRUE((*session)->reserve_frames(4).ok());
  ASSERT_TRUE((*session)->reserve_frames(2).ok());
  auto outputs = (*session)->run({{"x", torch_file("input_0.npy")}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  ASSERT_EQ(outputs->size(), 1u);
  expect_close((*outputs)[0], torch_file("output_0.npy"));
}

// shard_with_plan: the plan's DTensor program over the original's weights (no copy). Saved, it
// is a file of its own (the rewritten Program, the weights after it), which opens and runs as the
// plan given to the session directly does.
TEST(Session, AShardedProgramSavesAsAFileOfItsOwn) {
  auto file = open_program(mlp());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  SessionOptions options = sharded(false);
  auto sharded_file = dist::shard_with_plan(*file, *options.shard_plan);
  ASSERT_TRUE(sharded_file.ok()) << sharded_file.error().to_string();
  EXPECT_TRUE(dist::is_dtensor_program(sharded_file->program()));
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmp != nullptr ? tmp : "/tmp") + "/sharded_mlp_rank" +
                           std::to_string(world.rank) + ".nrt";
  ASSERT_TRUE(save_program(*sharded_file, path).ok());
  auto saved = open_program(path);
  ASSERT_TRUE(saved.ok()) << saved.error().to_string();
  EXPECT_TRUE(dist::is_dtensor_program(saved->program())) << "the file holds the sharded Program, not the original";
  options.shard_plan.reset();
  auto session = Session::open(std::move(*saved), world, options);
  ASSERT_TRUE(session.ok()) << session.error().to_string();
  auto outputs = (*session)->run({{"x", torch_file("input_0.npy")}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  expect_close((*outputs)[0], torch_file("output_0.npy"));
}

TEST(Session, DTensorGlobalInputsGiveGlobalOutputs) {
  auto session = Session::open(mlp(), world, sharded(false));
  ASSERT_TRUE(session.ok()) << session.error().to_string();
  EXPECT_TRUE((*session)->is_dtensor());
  EXPECT_TRUE((*session)->outputs_are_global());
  // A caller gives x whole; the session cuts this rank's rows.
  const auto declared = (*session)->inputs(InputsAre::kGlobal);
  ASSERT_EQ(declared.size(), 1u);
  EXPECT_EQ(declared[0].sizes[0].literal, 4);
  auto outputs = (*session)->run({{"x", torch_file("input_0.npy")}}, InputsAre::kGlobal);
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  expect_close((*outputs)[0], torch_file("output_0.npy"));
  // Under a launcher the fc2 partial sums were reduced through the traced groups.
  if (world.size > 1) {
    EXPECT_GT((*session)->tracing()->counts.bytes_sent(), 0u);
  }
}

TEST(Session, DTensorLocalInputsGiveLocalOutputs) {
  auto session = Session::open(mlp(), world, sharded(true));
  ASSERT_TRUE(session.ok()) << session.error().to_string();
  EXPECT_FALSE((*session)->outputs_are_global());
  const auto declared = (*session)->inputs(InputsAre::kLocal);
  ASSERT_EQ(declared.size(), 1u);
  EXPECT_EQ(declared[0].sizes[0].literal, 4 / world.size);
  auto outputs = (*session)->run({{"x", rows_of_rank(torch_file("input_0.npy"))}}, InputsAre::kLocal);
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  expect_close((*outputs)[0], rows_of_rank(torch_file("output_0.npy")));
  // A global x given as local is refused, naming the input, not run on the wrong rows.
  if (world.size > 1) {
    auto wrong = (*session)->run({{"x", torch_file("input_0.npy")}}, InputsAre::kLocal);
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().message.find("x"), std::string::npos) << wrong.error().to_string();
  }
}

TEST(Session, OneRanksBadFileStopsEveryRank) {
  // The last rank names a file that does not exist; every rank gets an error, none hangs.
  const bool mine_is_bad = world.rank == world.size - 1;
  auto session = Session::open(mine_is_bad ? mlp() + ".absent" : mlp(), world);
  ASSERT_FALSE(session.ok());
  if (mine_is_bad) {
    EXPECT_EQ(session.error().code, ErrorCode::IoOpen) << session.error().to_string();
  } else {
    EXPECT_NE(session.error().message.find("failed opening the program"), std::string::npos)
        << session.error().to_string();
  }
}

TEST(Session, APlanTheWorldCannotHoldIsRefused) {
  SessionOptions options = sharded(false);
  options.shard_plan->mesh_shape = {world.size + 1};
  auto session = Session::open(mlp(), world, options);
  ASSERT_FALSE(session.ok());
}

}  // namespace
}  // namespace nrt

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  auto joined = nrt::exec::join_rank_world("session_test world");
  if (!joined) {
    std::fprintf(stderr, "%s\n", joined.error().to_string().c_str());
    return 2;
  }
  nrt::world = std::move(*joined);
  if (nrt::world.rank != 0) {
    delete ::testing::UnitTest::GetInstance()->listeners().Release(
        ::testing::UnitTest::GetInstance()->listeners().default_result_printer());
  }
  return RUN_ALL_TESTS();
}
