// Building execution plans: every missing kernel reported in one error (and by
// missing_kernels, subgraphs included), lifetimes and releases, constants converted once,
// unsupported argument kinds named, graph lookup.
#include <gtest/gtest.h>

#include "executor/runtime/execution_plan.h"
#include "testdata/program_builder.h"
#include "serializer/open_program.h"
#include "tests/executor/test_kernels.h"

namespace nrt::testing {
namespace {

using exec::build_execution_plan;
using exec::missing_kernels;
using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

ProgramWithWeights program_with_missing_ops() {
  ProgramBuilder p("execution_plan_test: missing ops");
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t missing_a = p.op("aten::does_not_exist", "default");
  const uint32_t missing_b = p.op("nrt_missing::other", "");
  const uint32_t missing_sub = p.op("nrt_missing::inside_subgraph", "Tensor");
  {
    auto sub = p.graph("branch", false);
    sub.drop_signature();
    const uint32_t a = sub.tensor("a", ScalarType::FLOAT32, {4});
    const uint32_t b = sub.tensor("b", ScalarType::FLOAT32, {4});
    sub.user_input(arg::tensor(a));
    sub.node("inner", missing_sub, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(b)});
    sub.user_output(arg::tensor(b));
  }
  const uint32_t branch = p.graph_index("branch");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {4});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {4});
  const uint32_t c = g.tensor("c", ScalarType::FLOAT32, {4});
  const uint32_t d = g.tensor("d", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  g.node("a", missing_a, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(a)});
  g.node("b", add, Args{{"self", arg::tensor(a)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(b)});
  g.node("c", missing_a, Args{{"self", arg::tensor(b)}}, {}, {arg::tensor(c)});
  g.node("d", missing_b, Args{{"self", arg::tensor(c)}, {"branch", arg::graph(branch)}}, {}, {arg::tensor(d)});
  g.user_output(arg::tensor(d));
  return p.finish();
}

TEST(ExecutionPlanTest, OneErrorListsEveryMissingTarget) {
  link_test_kernels();
  auto file = verify_in_memory(program_with_missing_ops());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto plan = build_execution_plan(file->program(), "", exec::Device{});
  ASSERT_FALSE(plan.ok());
  EXPECT_EQ(plan.error().code, ErrorCode::MissingKernel);
  const std::string& message = plan.error().message;
  EXPECT_NE(message.find("no cpu kernel for 2 targets"), std::string::npos) << message;
  EXPECT_NE(message.find("aten::does_not_exist.default (2 nodes: a, c)"), std::string::npos) << message;
  EXPECT_NE(message.find("nrt_missing::other (node d)"), std::string::npos) << message;

  auto missing = missing_kernels(file->program(), "main");
  ASSERT_TRUE(missing.ok());
  EXPECT_EQ(*missing, (std::vector<std::string>{"aten::does_not_exist.default", "nrt_missing::inside_subgraph.Tensor",
                                                "nrt_missing::other"}));
  auto cuda = missing_kernels(file->program(), "main", exec::Device{exec::DeviceKind::kCuda, 0});
  ASSERT_TRUE(cuda.ok());
  EXPECT_EQ(cuda->size(), 4u);  // the test kernels exist for the CPU only
  auto unknown = missing_kernels(file->program(), "nope");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("graphs: branch, main"), std::string::npos) << unknown.error().message;
}

TEST(ExecutionPlanTest, LifetimesReleasesAndConstants) {
  link_test_kernels();
  ProgramBuilder p("execution_plan_test: lifetimes");
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t scale = p.op("nrt_test::scale", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {4});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {4});
  const uint32_t unused = g.tensor("unused", ScalarType::FLOAT32, {4});
  const uint32_t c = g.tensor("c", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  g.node("a", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(a)});
  g.node("b", scale, Args{{"self", arg::tensor(a)}}, Args{{"factor", arg::real(0.5)}}, {arg::tensor(b)});
  g.node("unused", scale, Args{{"self", arg::tensor(a)}}, Args{{"factor", arg::real(2.0)}}, {arg::tensor(unused)});
  g.node("c", add, Args{{"self", arg::tensor(b)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(c)});
  g.user_output(arg::tensor(c));
  auto file = verify_in_memory(p.finish());
  ASSERT_TRUE(file.ok());
  auto plan = build_execution_plan(file->program(), "main", exec::Device{});
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  const auto& v = plan->values;
  EXPECT_EQ(v[x].def_step, -1);
  EXPECT_EQ(v[x].last_use, 3);
  EXPECT_EQ(v[a].def_step, 0);
  EXPECT_EQ(v[a].last_use, 2);
  EXPECT_EQ(v[unused].def_step, 2);
  EXPECT_EQ(v[unused].last_use, 2);  // never read: dies where it is born
  EXPECT_EQ(v[c].last_use, 4);       // graph output: read after the last node
  for (uint32_t value : {a, b, unused, c}) EXPECT_TRUE(v[value].planned) << v[value].name;
  EXPECT_FALSE(v[x].planned);
  // a dies after node 2 (its last reader), b after node 3, unused right after node 2.
  EXPECT_EQ(plan->nodes[2].releases, (std::vector<int32_t>{static_cast<int32_t>(a), static_cast<int32_t>(unused)}));
  EXPECT_EQ(plan->nodes[3].releases, (std::vector<int32_t>{static_cast<int32_t>(b)}));
  EXPECT_TRUE(plan->nodes[0].releases.empty());
  // The float constants became RuntimeValues once, in their own slots.
  ASSERT_EQ(plan->constants.size(), 2u);
  EXPECT_EQ(std::get<double>(plan->constants[0].value), 0.5);
  EXPECT_EQ(std::get<double>(plan->constants[1].value), 2.0);
  EXPECT_EQ(plan->nodes[1].arg_names, (std::vector<std::string>{"self", "factor"}));
  EXPECT_EQ(plan->nodes[1].arg_slots[1], plan->constants[0].slot);
  ASSERT_EQ(plan->outputs.size(), 1u);
  EXPECT_EQ(plan->outputs[0].name, "c");
}

TEST(ExecutionPlanTest, UnsupportedArgumentKindsNameTheNode) {
  link_test_kernels();
  ProgramBuilder p("execution_plan_test: complex argument");
  const uint32_t scale = p.op("nrt_test::scale", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  g.node("scaled", scale, Args{{"self", arg::tensor(x)}, {"factor", arg::complex(1, 2)}}, {}, {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  auto file = verify_in_memory(p.finish());
  ASSERT_TRUE(file.ok());
  auto plan = build_execution_plan(file->program(), "main", exec::Device{});
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.error().message.find("node 0 'scaled'"), std::string::npos) << plan.error().message;
  EXPECT_NE(plan.error().message.find("argument 1 'factor' is a ComplexArg"), std::string::npos) << plan.error().message;
}

}  // namespace
}  // namespace nrt::testing
