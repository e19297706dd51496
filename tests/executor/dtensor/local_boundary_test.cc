// nrt::from_local and nrt::to_local nodes through the sharding pass and the executor, over the
// world's MPI groups (1 to 4 ranks, distributed_mpi_test.sh): a DTensor user input taken to this
// rank's local tensor, computed on locally and made a DTensor again gives the global answer once
// assembled; a None passes through both as None; a local tensor of other sizes than the rank's
// shard is refused, naming both. Linked into distributed_test_bin.
#include <gtest/gtest.h>

#include "executor/dtensor/sharded_program.h"
#include "executor/runtime/executor.h"
#include "executor/comm/mpi_process_group.h"
#include "serializer/write_program.h"
#include "testdata/program_builder.h"

namespace nrt::dist {
namespace {

using exec::Tensor;
namespace arg = testdata::arg;
using testdata::Args;

int world_size() { return exec::mpi_world()->size; }
int world_rank() { return exec::mpi_world()->rank; }

fb::Placement shard0() { return fb::Placement(fb::PlacementKind::SHARD, fb::ReduceOp::SUM, 0, 0); }

// x: DTensor [rows, 3] Shard(0) -> to_local -> mul 2 -> from_local Shard(0) -> y (user output);
// from_local(None) -> to_local -> nothing (user output). With `only_local_input`, instead: a plain
// user input `local_in` [coordinate 0's rows, 3] made a DTensor by from_local (output z).
ProgramWithWeights boundary_program(int64_t rows, bool only_local_input) {
  const int64_t n = world_size(), local_rows = (rows + n - 1) / n;
  testdata::ProgramBuilder p("nrt tests: local_boundary_test.cc");
  std::vector<int32_t> ranks;
  for (int32_t r = 0; r < n; ++r) ranks.push_back(r);
  const uint32_t mesh = p.mesh("world", {n}, ranks, {"tp"});
  const uint32_t from_local = p.op("nrt::from_local", "default");
  const uint32_t to_local = p.op("nrt::to_local", "default");
  const uint32_t mul = p.op("aten::mul", "Tensor");
  auto g = p.graph("forward", true);
  const uint32_t x = g.dtensor("x", ScalarType::FLOAT32, {local_rows, 3}, {rows, 3}, mesh, {shard0()});
  g.user_input(arg::tensor(x));
  if (only_local_input) {
    const uint32_t local_in = g.tensor("local_in", ScalarType::FLOAT32, {local_rows, 3});
    g.user_input(arg::tensor(local_in));
    const uint32_t z = g.dtensor("z", ScalarType::FLOAT32, {local_rows, 3}, {rows, 3}, mesh, {shard0()});
    g.node("from_local_in", from_local, Args{{"local", arg::tensor(local_in)}}, {}, {arg::tensor(z)});
    g.user_output(arg::tensor(z));
    return p.finish();
  }
  const uint32_t local = g.tensor("local", ScalarType::FLOAT32, {local_rows, 3});
  g.node("to_local", to_local, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(local)});
  const uint32_t doubled = g.tensor("doubled", ScalarType::FLOAT32, {local_rows, 3});
  g.node("mul", mul, Args{{"self", arg::tensor(local)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(doubled)});
  const uint32_t y = g.dtensor("y", ScalarType::FLOAT32, {local_rows, 3}, {rows, 3}, mesh, {shard0()});
  g.node("from_local", from_local, Args{{"local", arg::tensor(doubled)}}, {}, {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  const uint32_t absent = g.dtensor("absent", ScalarType::FLOAT32, {local_rows, 3}, {rows, 3}, mesh, {shard0()});
  g.node("from_none", from_local, Args{{"local", arg::optional_tensor(-1)}}, {}, {arg::tensor(absent)});
  const uint32_t still_absent = g.value("still_absent", fb::ValueKind::OPTIONAL_TENSOR);
  g.set_tensor_meta(still_absent, testdata::tensor_meta(ScalarType::FLOAT32, {local_rows, 3}));
  g.node("to_none", to_local, Args{{"self", arg::tensor(absent)}}, {}, {arg::tensor(still_absent)});
  g.user_output(arg::tensor(still_absent));
  return p.finish();
}

struct Loaded {
  std::unique_ptr<exec::Executor> executor;
  ShardingResult plan;
};

Result<Loaded> load_for_rank(ProgramWithWeights program, bool global_outputs) {
  std::vector<std::span<const uint8_t>> storages;
  for (const auto& s : program.storages) storages.emplace_back(s);
  NRT_TRY(bytes, serialize_program(std::move(program.program), storages));
  NRT_TRY(file, ProgramFile::from_bytes(std::move(*bytes)));
  NRT_TRY(sharded, shard_program_file(*file, {world_rank(), world_size(), "", global_outputs}));
  NRT_TRY(registry, exec::mpi_process_registry(sharded->file.program()));
  exec::ExecutorOptions options;
  options.process_groups = std::make_shared<const exec::ProcessGroupRegistry>(std::move(*registry));
  NRT_TRY(executor, exec::Executor::load(std::move(sharded->file), options));
  return Loaded{std::move(*executor), std::move(sharded->plan)};
}

Tensor counting(std::vector<int64_t> sizes) {
  Tensor t = Tensor::empty(ScalarType::FLOAT32, std::move(sizes));
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = static_cast<float>(i) - 7.5f;
  return t;
}

TEST(LocalBoundary, ToLocalComputeFromLocalGivesTheGlobalAnswer) {
  auto loaded = load_for_rank(boundary_program(12, false), true);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  exec::NamedInputs inputs{{"x", counting({12, 3})}};
  ASSERT_TRUE(shard_user_inputs(loaded->plan, inputs));
  EXPECT_EQ(std::get<Tensor>(inputs["x"]).sizes(), (std::vector<int64_t>{12 / world_size(), 3}));
  auto outputs = loaded->executor->run(inputs);
  ASSERT_TRUE(outputs) << outputs.error().to_string();
  ASSERT_EQ(outputs->size(), 2u);
  const auto& y = std::get<Tensor>((*outputs)[0].value);
  ASSERT_EQ(y.sizes(), (std::vector<int64_t>{12, 3}));
  for (int64_t i = 0; i < y.numel(); ++i) EXPECT_EQ(y.data<float>()[i], 2.0f * (static_cast<float>(i) - 7.5f)) << i;
  // None in, None out: nothing invented on the way.
  EXPECT_TRUE(std::holds_alternative<std::monostate>((*outputs)[1].value));
}

TEST(LocalBoundary, LocalTensorOfOtherSizesThanTheShardIsRefused) {
  // 5 rows over n ranks: ranks whose shard is smaller than coordinate 0's get a local tensor of
  // coordinate 0's sizes, which is not theirs.
  auto loaded = load_for_rank(boundary_program(5, true), false);
  ASSERT_TRUE(loaded) << loaded.error().to_string();
  const int64_t n = world_size(), c = (5 + n - 1) / n;
  const int64_t mine = std::max<int64_t>(0, std::min<int64_t>(5, (world_rank() + 1) * c) - world_rank() * c);
  exec::NamedInputs inputs{{"x", counting({5, 3})}, {"local_in", counting({c, 3})}};
  ASSERT_TRUE(shard_user_inputs(loaded->plan, inputs));
  auto outputs = loaded->executor->run(inputs);
  if (mine == c) {
    ASSERT_TRUE(outputs) << outputs.error().to_string();
    EXPECT_EQ(std::get<Tensor>((*outputs)[0].value).sizes(), (std::vector<int64_t>{c, 3}));
  } else {
    ASSERT_FALSE(outputs);
    EXPECT_NE(outputs.error().message.find("from_local_in"), std::string::npos) << outputs.error().message;
    EXPECT_NE(outputs.error().message.find("the local tensor is f32[" + std::to_string(c) + ",3] but this rank's shard is f32[" +
                                           std::to_string(mine) + ",3]"),
              std::string::npos)
        << outputs.error().message;
  }
}

}  // namespace
}  // namespace nrt::dist
