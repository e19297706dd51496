// Constant nodes (executor/runtime/constant_nodes.h): nodes that read only weights and literals
// run in a frame's first run, later runs start from the values kept then, and every run gives
// the answer of running every node.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "executor/runtime/constant_nodes.h"
#include "executor/runtime/executor.h"
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

// w = [0.5, 1, 1.5, 2] (a parameter). squared = w * w; shifted = squared + w (both constant);
// noise = rand([4]) (a draw: never constant); y = x + shifted; out = y + noise * 0.
// With `written`, a node writes into `squared` in place after it is read (squared.add_(x)), so
// neither it nor what reads it is constant.
ProgramWithWeights program(bool written) {
  ProgramBuilder p("constant_nodes_test");
  const uint32_t mul = p.op("aten::mul", "Tensor");
  const uint32_t add = p.op("aten::add", "Tensor");
  const uint32_t add_ = p.op("aten::add_", "Tensor");
  const uint32_t rand = p.op("aten::rand", "default");
  const uint32_t mul_scalar = p.op("aten::mul", "Scalar");
  const float weights[4] = {0.5f, 1.0f, 1.5f, 2.0f};
  std::vector<uint8_t> bytes(sizeof(weights));
  std::memcpy(bytes.data(), weights, sizeof(weights));
  p.weight("w", p.storage(std::move(bytes)), testdata::tensor_meta(ScalarType::FLOAT32, {4}), true);
  auto g = p.graph("main", true);
  const uint32_t w = g.tensor("p_w", ScalarType::FLOAT32, {4});
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t squared = g.tensor("squared", ScalarType::FLOAT32, {4});
  const uint32_t shifted = g.tensor("shifted", ScalarType::FLOAT32, {4});
  const uint32_t noise = g.tensor("noise", ScalarType::FLOAT32, {4});
  const uint32_t silent = g.tensor("silent", ScalarType::FLOAT32, {4});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {4});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {4});
  g.input(arg::tensor(w), fb::InputKind::PARAMETER, "w");
  g.user_input(arg::tensor(x));
  g.node("squared", mul, Args{{"self", arg::tensor(w)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(squared)});
  g.node("shifted", add, Args{{"self", arg::tensor(squared)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(shifted)});
  g.node("noise", rand, Args{{"size", arg::integers({4})}}, {}, {arg::tensor(noise)});
  g.node("silent", mul_scalar, Args{{"self", arg::tensor(noise)}, {"other", arg::real(0.0)}}, {}, {arg::tensor(silent)});
  g.node("y", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(shifted)}}, {}, {arg::tensor(y)});
  g.node("out", add, Args{{"self", arg::tensor(y)}, {"other", arg::tensor(silent)}}, {}, {arg::tensor(out)});
  if (written) {
    const uint32_t grown = g.tensor("grown", ScalarType::FLOAT32, {4});
    g.node("grown", add_, Args{{"self", arg::tensor(squared)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(grown)});
    g.user_output(arg::tensor(grown));
  }
  g.user_output(arg::tensor(out));
  return p.finish();
}

std::set<std::string> constant_names(const Executor& executor) {
  const exec::ConstantNodes found = exec::find_constant_nodes(executor.plan());
  std::set<std::string> names;
  for (size_t n = 0; n < found.node_is_constant.size(); ++n) {
    if (found.node_is_constant[n]) names.insert(executor.plan().nodes[n].name);
  }
  EXPECT_EQ(found.count, names.size());
  return names;
}

TEST(ConstantNodes, WeightsOnlyNodesAreConstantButNotDrawsOrUserInputs) {
  auto executor = load_program(program(false));
  ASSERT_NE(executor, nullptr);
  EXPECT_EQ(constant_names(*executor), (std::set<std::string>{"squared", "shifted"}));
  // Only `shifted` is read by a node that runs every time.
  const exec::ConstantNodes found = exec::find_constant_nodes(executor->plan());
  std::set<std::string> kept;
  for (const auto& values : found.kept_values) {
    for (int32_t v : values) kept.insert(executor->plan().values[static_cast<size_t>(v)].name);
  }
  EXPECT_EQ(kept, (std::set<std::string>{"shifted"}));
}

TEST(ConstantNodes, AValueWrittenInPlaceIsNotConstant) {
  auto executor = load_program(program(true));
  ASSERT_NE(executor, nullptr);
  EXPECT_EQ(constant_names(*executor), std::set<std::string>{});
}

TEST(ConstantNodes, LaterRunsSkipThemAndGiveTheSameAnswers) {
  for (bool written : {false, true}) {
    SCOPED_TRACE(written ? "squared written in place" : "constants kept");
    auto executor = load_program(program(written));
    ASSERT_NE(executor, nullptr);
    exec::RunProfile profile;
    executor->set_profile(&profile);
    for (int run = 0; run < 3; ++run) {
      const float base = static_cast<float>(run) * 10.0f;
      const std::vector<float> x = {base, base + 1, base + 2, base + 3};
      auto outputs = executor->run(NamedInputs{{"x", f32(x)}});
      ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
      std::vector<float> want(4);
      for (size_t i = 0; i < 4; ++i) {
        const float w = 0.5f * static_cast<float>(i + 1);
        want[i] = x[i] + (w * w + w);
      }
      EXPECT_EQ(f32_values(outputs->back().value), want) << "run " << run;
      if (written) {
        std::vector<float> grown(4);
        for (size_t i = 0; i < 4; ++i) {
          const float w = 0.5f * static_cast<float>(i + 1);
          grown[i] = w * w + x[i];
        }
        EXPECT_EQ(f32_values(outputs->front().value), grown) << "run " << run << ": squared is recomputed every run";
      }
    }
    // Which nodes ran in which run.
    std::vector<std::set<std::string>> ran(3);
    for (const exec::NodeTiming& t : profile.timings()) ran.at(t.run).insert(executor->plan().nodes[t.node].name);
    const std::set<std::string> every = written ? std::set<std::string>{"squared", "shifted", "noise", "silent", "y", "out", "grown"}
                                                : std::set<std::string>{"squared", "shifted", "noise", "silent", "y", "out"};
    EXPECT_EQ(ran[0], every);
    const std::set<std::string> later = written ? every : std::set<std::string>{"noise", "silent", "y", "out"};
    EXPECT_EQ(ran[1], later);
    EXPECT_EQ(ran[2], later);
    executor->set_profile(nullptr);
  }
}

}  // namespace
}  // namespace nrt::testing
