// In-place element-wise ops through the executor with the CPU kernels (execution_plan.h, "In-place
// ops"): the functional kernel computes straight into the mutated tensor only where that is safe,
// and every path gives torch's answer: an argument viewing the target's storage (a.add_(a.t()))
// reads the values from before the write, and a mutated graph input leaves the caller's array as
// it was.
#include <gtest/gtest.h>

#include <algorithm>

#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"
#include "tests/executor/load_program.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::NamedInputs;
using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

// a = x * x; a.add_(a.t()); a.hardtanh_(-20, 20); x.relu_(); outputs a and x (all [2, 2]).
ProgramWithWeights in_place_program() {
  ProgramBuilder p("in_place_run_test");
  const uint32_t mul = p.op("aten::mul", "Tensor");
  const uint32_t transpose = p.op("aten::t", "default");
  const uint32_t add_ = p.op("aten::add_", "Tensor");
  const uint32_t hardtanh_ = p.op("aten::hardtanh_", "default");
  const uint32_t relu_ = p.op("aten::relu_", "default");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {2, 2});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {2, 2});
  const uint32_t r = g.tensor("r", ScalarType::FLOAT32, {2, 2});
  const uint32_t sum = g.tensor("sum", ScalarType::FLOAT32, {2, 2});
  const uint32_t clamped = g.tensor("clamped", ScalarType::FLOAT32, {2, 2});
  const uint32_t rectified = g.tensor("rectified", ScalarType::FLOAT32, {2, 2});
  g.user_input(arg::tensor(x));
  g.node("a", mul, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(a)});
  g.node("r", transpose, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(r)});
  g.node("sum", add_, Args{{"self", arg::tensor(a)}, {"other", arg::tensor(r)}}, {}, {arg::tensor(sum)});
  g.node("clamped", hardtanh_, Args{{"self", arg::tensor(sum)}},
         Args{{"min_val", arg::real(-20.0)}, {"max_val", arg::real(20.0)}}, {arg::tensor(clamped)});
  g.node("rectified", relu_, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(rectified)});
  g.user_output(arg::tensor(clamped));
  g.user_output(arg::tensor(rectified));
  return p.finish();
}

TEST(InPlaceRuns, EveryPathGivesTorchsAnswer) {
  auto executor = load_program(in_place_program());
  ASSERT_NE(executor, nullptr);
  const std::vector<float> x = {-3, 1, 2, -5};
  const exec::Tensor input = f32({2, 2}, x);
  for (int run = 0; run < 2; ++run) {  // the second run reuses the frame's memory
    auto outputs = executor->run(NamedInputs{{"x", input}});
    ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
    // a = [[9, 1], [4, 25]]; a + a.t() = [[18, 5], [5, 50]], clamped to 20.
    EXPECT_EQ(f32_values((*outputs)[0].value), (std::vector<float>{18, 5, 5, 20})) << "add_ read a.t() from before its write";
    EXPECT_EQ(f32_values((*outputs)[1].value), (std::vector<float>{0, 1, 2, 0}));
    EXPECT_EQ(f32_values(input), x) << "the caller's array is not written";
  }
}

}  // namespace
}  // namespace nrt::testing
