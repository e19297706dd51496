// Subgraph execution through the real CPU kernels: higher_order::cond picks a branch by a
// predicate known only at run time (nested conds included), higher_order::while_loop carries
// values through its body until its condition fails, higher_order::wrap_with_set_grad_enabled runs
// its body; results never alias a subgraph's memory;
// arity errors are reported with the node and subgraph, missing kernels of subgraphs at load.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"
#include "tests/executor/load_program.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::NamedInputs;
using exec::RuntimeValue;
using exec::Tensor;
using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

template <typename T>
Tensor scalar(ScalarType dtype, T value) {
  Tensor t = Tensor::empty(dtype, {});
  std::memcpy(t.raw_data(), &value, sizeof(T));
  return t;
}

// main(x: f32[3], flag: b8[], inner: b8[]) = cond(flag, twice, nested, [x, inner]) where
//   twice(x, inner)  = x * 2
//   nested(x, inner) = cond(inner, identity, minus_one, [x])
//   identity(x) = x (returns its input), minus_one(x) = x + (-1).
// `pred_rank1` makes the outer predicate a one-element f32[1] instead.
ProgramWithWeights cond_program(bool pred_rank1 = false) {
  ProgramBuilder p("control_flow_test: cond");
  const uint32_t cond = p.op("higher_order::cond", "");
  const uint32_t mul = p.op("aten::mul", "Scalar");
  const uint32_t add = p.op("aten::add", "Scalar");

  auto twice = p.graph("main/twice", false);
  {
    const uint32_t x = twice.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t inner = twice.tensor("inner", ScalarType::BOOL, {});
    const uint32_t y = twice.tensor("y", ScalarType::FLOAT32, {3});
    twice.user_input(arg::tensor(x));
    twice.user_input(arg::tensor(inner));
    twice.node("y", mul, Args{{"self", arg::tensor(x)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(y)});
    twice.user_output(arg::tensor(y));
  }
  auto identity = p.graph("main/identity", false);
  {
    const uint32_t x = identity.tensor("x", ScalarType::FLOAT32, {3});
    identity.user_input(arg::tensor(x));
    identity.user_output(arg::tensor(x));
  }
  auto minus_one = p.graph("main/minus_one", false);
  {
    const uint32_t x = minus_one.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t y = minus_one.tensor("y", ScalarType::FLOAT32, {3});
    minus_one.user_input(arg::tensor(x));
    minus_one.node("y", add, Args{{"self", arg::tensor(x)}, {"other", arg::real(-1.0)}}, {}, {arg::tensor(y)});
    minus_one.user_output(arg::tensor(y));
  }
  auto nested = p.graph("main/nested", false);
  {
    const uint32_t x = nested.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t inner = nested.tensor("inner", ScalarType::BOOL, {});
    const uint32_t y = nested.tensor("y", ScalarType::FLOAT32, {3});
    nested.user_input(arg::tensor(x));
    nested.user_input(arg::tensor(inner));
    nested.node("y", cond,
                Args{{"pred", arg::tensor(inner)},
                     {"true_fn", arg::graph(p.graph_index("main/identity"))},
                     {"false_fn", arg::graph(p.graph_index("main/minus_one"))},
                     {"operands", arg::tensors({x})}},
                {}, {arg::tensor(y)});
    nested.user_output(arg::tensor(y));
  }
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {3});
  const uint32_t flag = pred_rank1 ? g.tensor("flag", ScalarType::FLOAT32, {1}) : g.tensor("flag", ScalarType::BOOL, {});
  const uint32_t inner = g.tensor("inner", ScalarType::BOOL, {});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {3});
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(flag));
  g.user_input(arg::tensor(inner));
  g.node("out", cond,
         Args{{"pred", arg::tensor(flag)},
              {"true_fn", arg::graph(p.graph_index("main/twice"))},
              {"false_fn", arg::graph(p.graph_index("main/nested"))},
              {"operands", arg::tensors({x, inner})}},
         {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  return p.finish();
}

TEST(ControlFlowTest, CondTakesTheBranchThePredicateNames) {
  auto executor = load_program(cond_program());
  ASSERT_NE(executor, nullptr);
  const Tensor x = f32({1, 2, 3});
  auto run = [&](bool flag, bool inner) {
    auto out = executor->run(NamedInputs{{"x", x},
                                         {"flag", scalar<uint8_t>(ScalarType::BOOL, flag)},
                                         {"inner", scalar<uint8_t>(ScalarType::BOOL, inner)}});
    EXPECT_TRUE(out.ok()) << out.error().to_string();
    return out.ok() ? f32_values((*out)[0].value) : std::vector<float>{};
  };
  EXPECT_EQ(run(true, false), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(run(false, false), (std::vector<float>{0, 1, 2}));  // nested cond, minus_one
  EXPECT_EQ(run(false, true), (std::vector<float>{1, 2, 3}));   // nested cond, identity
  EXPECT_EQ(run(true, true), (std::vector<float>{2, 4, 6}));
}

// main(x, y) = wrap_with_set_grad_enabled(False, body, x, y) as torch's training IR records a
// `with torch.no_grad():` block (positional arguments, the body's inputs after the first two);
// body(x, y) = (x * 2, x + y). Grad mode means nothing here: the body runs as it is.
TEST(ControlFlowTest, WrapWithSetGradEnabledRunsItsBody) {
  ProgramBuilder p("control_flow_test: wrap_with_set_grad_enabled");
  const uint32_t wrap = p.op("higher_order::wrap_with_set_grad_enabled", "");
  const uint32_t mul = p.op("aten::mul", "Scalar");
  const uint32_t add = p.op("aten::add", "Tensor");
  auto body = p.graph("main/body", false);
  {
    const uint32_t x = body.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t y = body.tensor("y", ScalarType::FLOAT32, {3});
    const uint32_t twice = body.tensor("twice", ScalarType::FLOAT32, {3});
    const uint32_t sum = body.tensor("sum", ScalarType::FLOAT32, {3});
    body.user_input(arg::tensor(x));
    body.user_input(arg::tensor(y));
    body.node("twice", mul, Args{{"self", arg::tensor(x)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(twice)});
    body.node("sum", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(y)}}, {}, {arg::tensor(sum)});
    body.user_output(arg::tensor(twice));
    body.user_output(arg::tensor(sum));
  }
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {3});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {3});
  const uint32_t twice = g.tensor("twice", ScalarType::FLOAT32, {3});
  const uint32_t sum = g.tensor("sum", ScalarType::FLOAT32, {3});
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(y));
  g.node("wrap", wrap,
         Args{{"", arg::boolean(false)}, {"", arg::graph(p.graph_index("main/body"))}, {"", arg::tensor(x)},
              {"", arg::tensor(y)}},
         {}, {arg::tensor(twice), arg::tensor(sum)});
  g.user_output(arg::tensor(twice));
  g.user_output(arg::tensor(sum));
  auto executor = load_program(p.finish());
  ASSERT_NE(executor, nullptr);
  auto out = executor->run(NamedInputs{{"x", f32({1, 2, 3})}, {"y", f32({10, 20, 30})}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(f32_values((*out)[0].value), (std::vector<float>{2, 4, 6}));
  EXPECT_EQ(f32_values((*out)[1].value), (std::vector<float>{11, 22, 33}));
}

TEST(ControlFlowTest, CondResultsAreCopiesNotTheBranchInput) {
  auto executor = load_program(cond_program());
  ASSERT_NE(executor, nullptr);
  const Tensor x = f32({1, 2, 3});
  auto out = executor->run(NamedInputs{
      {"x", x}, {"flag", scalar<uint8_t>(ScalarType::BOOL, 0)}, {"inner", scalar<uint8_t>(ScalarType::BOOL, 1)}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  const auto& result = std::get<Tensor>((*out)[0].value);
  EXPECT_NE(result.storage(), x.storage());
  x.data<float>()[0] = 100;
  EXPECT_EQ(result.data<float>()[0], 1.0f);
}

TEST(ControlFlowTest, OneElementTensorsAreRuntimePredicates) {
  auto executor = load_program(cond_program(/*pred_rank1=*/true));
  ASSERT_NE(executor, nullptr);
  Tensor flag = f32({0.5f});
  auto out = executor->run(NamedInputs{{"x", f32({1, 2, 3})}, {"flag", flag}, {"inner", scalar<uint8_t>(ScalarType::BOOL, 0)}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(f32_values((*out)[0].value), (std::vector<float>{2, 4, 6}));
  flag.data<float>()[0] = 0.0f;
  out = executor->run(NamedInputs{{"x", f32({1, 2, 3})}, {"flag", flag}, {"inner", scalar<uint8_t>(ScalarType::BOOL, 0)}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(f32_values((*out)[0].value), (std::vector<float>{0, 1, 2}));
}

// main(i: i64[], x: f32[3], limit: i64[]) = while_loop(i < limit: (i + 1, x * 2)), returning
// both carried values.
ProgramWithWeights while_program(bool body_returns_one = false) {
  ProgramBuilder p("control_flow_test: while_loop");
  const uint32_t loop = p.op("higher_order::while_loop", "");
  const uint32_t lt = p.op("aten::lt", "Tensor");
  const uint32_t add = p.op("aten::add", "Scalar");
  const uint32_t mul = p.op("aten::mul", "Scalar");

  auto cond_fn = p.graph("main/cond_fn", false);
  {
    const uint32_t i = cond_fn.tensor("i", ScalarType::INT64, {});
    const uint32_t x = cond_fn.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t limit = cond_fn.tensor("limit", ScalarType::INT64, {});
    const uint32_t go = cond_fn.tensor("go", ScalarType::BOOL, {});
    cond_fn.user_input(arg::tensor(i));
    cond_fn.user_input(arg::tensor(x));
    cond_fn.user_input(arg::tensor(limit));
    cond_fn.node("go", lt, Args{{"self", arg::tensor(i)}, {"other", arg::tensor(limit)}}, {}, {arg::tensor(go)});
    cond_fn.user_output(arg::tensor(go));
  }
  auto body_fn = p.graph("main/body_fn", false);
  {
    const uint32_t i = body_fn.tensor("i", ScalarType::INT64, {});
    const uint32_t x = body_fn.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t limit = body_fn.tensor("limit", ScalarType::INT64, {});
    const uint32_t next_i = body_fn.tensor("next_i", ScalarType::INT64, {});
    const uint32_t next_x = body_fn.tensor("next_x", ScalarType::FLOAT32, {3});
    body_fn.user_input(arg::tensor(i));
    body_fn.user_input(arg::tensor(x));
    body_fn.user_input(arg::tensor(limit));
    body_fn.node("next_i", add, Args{{"self", arg::tensor(i)}, {"other", arg::integer(1)}}, {}, {arg::tensor(next_i)});
    body_fn.node("next_x", mul, Args{{"self", arg::tensor(x)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(next_x)});
    body_fn.user_output(arg::tensor(next_i));
    if (!body_returns_one) body_fn.user_output(arg::tensor(next_x));
  }
  auto g = p.graph("main", true);
  const uint32_t i = g.tensor("i", ScalarType::INT64, {});
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {3});
  const uint32_t limit = g.tensor("limit", ScalarType::INT64, {});
  const uint32_t out_i = g.tensor("out_i", ScalarType::INT64, {});
  const uint32_t out_x = g.tensor("out_x", ScalarType::FLOAT32, {3});
  g.user_input(arg::tensor(i));
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(limit));
  g.node("loop", loop,
         Args{{"cond_fn", arg::graph(p.graph_index("main/cond_fn"))},
              {"body_fn", arg::graph(p.graph_index("main/body_fn"))},
              {"carried_inputs", arg::tensors({i, x})},
              {"additional_inputs", arg::tensors({limit})}},
         {}, {arg::tensor(out_i), arg::tensor(out_x)});
  g.user_output(arg::tensor(out_i));
  g.user_output(arg::tensor(out_x));
  return p.finish();
}

TEST(ControlFlowTest, WhileLoopCarriesValuesUntilItsConditionFails) {
  auto executor = load_program(while_program());
  ASSERT_NE(executor, nullptr);
  for (int64_t limit : {0, 1, 5}) {
    auto out = executor->run(NamedInputs{{"i", scalar<int64_t>(ScalarType::INT64, 0)},
                                         {"x", f32({1, -2, 0.5f})},
                                         {"limit", scalar<int64_t>(ScalarType::INT64, limit)}});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    EXPECT_EQ(std::get<Tensor>((*out)[0].value).data<int64_t>()[0], limit);
    const float factor = static_cast<float>(1 << limit);
    EXPECT_EQ(f32_values((*out)[1].value), (std::vector<float>{factor, -2 * factor, 0.5f * factor})) << "limit " << limit;
  }
}

TEST(ControlFlowTest, ErrorsNameTheNodeAndTheSubgraph) {
  auto executor = load_program(cond_program(/*pred_rank1=*/true));
  ASSERT_NE(executor, nullptr);
  // A predicate input declared f32[1] given two elements is refused before anything runs.
  auto wrong = executor->run(NamedInputs{{"x", f32({1, 2, 3})}, {"flag", f32({1, 1})}, {"inner", scalar<uint8_t>(ScalarType::BOOL, 0)}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_EQ(wrong.error().code, ErrorCode::InputMismatch) << wrong.error().to_string();

  auto arity = load_program(while_program(/*body_returns_one=*/true));
  ASSERT_NE(arity, nullptr);
  auto out = arity->run(NamedInputs{{"i", scalar<int64_t>(ScalarType::INT64, 0)},
                                    {"x", f32({1, 2, 3})},
                                    {"limit", scalar<int64_t>(ScalarType::INT64, 2)}});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().code, ErrorCode::KernelError) << out.error().to_string();
  EXPECT_NE(out.error().message.find("node 0 'loop' (higher_order::while_loop)"), std::string::npos)
      << out.error().message;
  EXPECT_NE(out.error().message.find("main/body_fn' returned 1 values for 2 carried inputs"), std::string::npos)
      << out.error().message;
}

// Each level's cond passes the same subgraph as both branches, 24 levels deep: one runner per
// subgraph makes that 25 executors (one per level) rather than 2^24, so it loads at once.
TEST(ControlFlowTest, ASubgraphUsedTwiceAtEveryLevelIsLoadedOnce) {
  constexpr int kLevels = 24;
  ProgramBuilder p("control_flow_test: shared subgraphs");
  const uint32_t cond = p.op("higher_order::cond", "");
  const uint32_t mul = p.op("aten::mul", "Scalar");
  auto leaf = p.graph("main/level" + std::to_string(kLevels), false);
  {
    const uint32_t x = leaf.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t flag = leaf.tensor("flag", ScalarType::BOOL, {});
    const uint32_t y = leaf.tensor("y", ScalarType::FLOAT32, {3});
    leaf.user_input(arg::tensor(x));
    leaf.user_input(arg::tensor(flag));
    leaf.node("y", mul, Args{{"self", arg::tensor(x)}, {"other", arg::real(2.0)}}, {}, {arg::tensor(y)});
    leaf.user_output(arg::tensor(y));
  }
  for (int level = kLevels - 1; level >= 0; --level) {
    const std::string name = level == 0 ? "main" : "main/level" + std::to_string(level);
    auto g = p.graph(name, level == 0);
    const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t flag = g.tensor("flag", ScalarType::BOOL, {});
    const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {3});
    g.user_input(arg::tensor(x));
    g.user_input(arg::tensor(flag));
    const uint32_t next = p.graph_index("main/level" + std::to_string(level + 1));
    g.node("y", cond,
           Args{{"pred", arg::tensor(flag)}, {"true_fn", arg::graph(next)}, {"false_fn", arg::graph(next)},
                {"operands", arg::tensors({x, flag})}},
           {}, {arg::tensor(y)});
    g.user_output(arg::tensor(y));
  }
  auto executor = load_program(p.finish());
  ASSERT_NE(executor, nullptr);
  auto out = executor->run(NamedInputs{{"x", f32({1, 2, 3})}, {"flag", scalar<uint8_t>(ScalarType::BOOL, 1)}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(f32_values((*out)[0].value), (std::vector<float>{2, 4, 6}));
}

TEST(ControlFlowTest, MissingKernelsInSubgraphsAreListedAtLoad) {
  ProgramBuilder p("control_flow_test: missing");
  const uint32_t cond = p.op("higher_order::cond", "");
  const uint32_t missing = p.op("nrt_test::no_such_op", "");
  const uint32_t missing_in_main = p.op("nrt_test::missing_in_main", "");
  auto branch = p.graph("main/branch", false);
  {
    const uint32_t x = branch.tensor("x", ScalarType::FLOAT32, {3});
    const uint32_t y = branch.tensor("y", ScalarType::FLOAT32, {3});
    branch.user_input(arg::tensor(x));
    branch.node("y", missing, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(y)});
    branch.user_output(arg::tensor(y));
  }
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {3});
  const uint32_t flag = g.tensor("flag", ScalarType::BOOL, {});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {3});
  const uint32_t also = g.tensor("also", ScalarType::FLOAT32, {3});
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(flag));
  g.node("also", missing_in_main, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(also)});
  const uint32_t sub = p.graph_index("main/branch");
  g.node("out", cond,
         Args{{"pred", arg::tensor(flag)}, {"true_fn", arg::graph(sub)}, {"false_fn", arg::graph(sub)},
              {"operands", arg::tensors({x})}},
         {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  g.user_output(arg::tensor(also));
  auto file = verify_in_memory(p.finish());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto executor = Executor::load(std::move(*file));
  ASSERT_FALSE(executor.ok());
  EXPECT_EQ(executor.error().code, ErrorCode::MissingKernel) << executor.error().to_string();
  // One error: the graph's own target with its node, then the one only the subgraph uses.
  EXPECT_NE(executor.error().message.find("nrt_test::missing_in_main (node also)"), std::string::npos)
      << executor.error().message;
  EXPECT_NE(executor.error().message.find("and in its subgraphs:\n  nrt_test::no_such_op"), std::string::npos)
      << executor.error().message;
}

}  // namespace
}  // namespace nrt::testing
