// Rotary embedding fusion (executor/runtime/rotary_fusion.h) through the executor with the CPU
// kernels: the chain torch.export writes for the Llama family runs as its first node and gives the
// bits of the same nodes run apart (the unfused program makes a value inside the chain a graph
// output, which the fusion must respect), on contiguous and transposed x with cos and sin
// broadcast over heads; chains that differ from the pattern are left as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/executor.h"
#include "executor/runtime/fused_chains.h"
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

constexpr int64_t kHeads = 3, kRows = 5, kLength = 16, kHalf = kLength / 2;

struct Chain {
  bool transposed = false;   // x = input [1, rows, heads, 16] transposed to [1, heads, rows, 16]
  bool swapped_cat = false;  // cat([lo, -hi]): not rotate_half
  bool b_is_output = false;  // r * sin is a graph output too: no fusion
};

std::vector<float> sines(int64_t count, int seed) {
  std::vector<float> values(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) values[static_cast<size_t>(i)] = static_cast<float>(std::sin(0.53 * static_cast<double>(i) + seed) * 2.0);
  return values;
}

ProgramWithWeights chain_program(const Chain& c) {
  ProgramBuilder p("rotary_fusion_test");
  const auto f32 = ScalarType::FLOAT32;
  const std::vector<int64_t> shape{1, kHeads, kRows, kLength}, half{1, kHeads, kRows, kHalf}, table{1, 1, kRows, kLength};
  auto g = p.graph("main", true);
  const uint32_t cos = g.tensor("cos", f32, table), sin = g.tensor("sin", f32, table);
  uint32_t x;
  if (c.transposed) {
    const uint32_t input = g.tensor("input", f32, {1, kRows, kHeads, kLength});
    g.user_input(arg::tensor(input));
    x = g.tensor("x", f32, shape);
    g.node("x", p.op("aten::transpose", "int"), Args{{"self", arg::tensor(input)}, {"dim0", arg::integer(1)}, {"dim1", arg::integer(2)}},
           {}, {arg::tensor(x)});
  } else {
    x = g.tensor("x", f32, shape);
    g.user_input(arg::tensor(x));
  }
  g.user_input(arg::tensor(cos));
  g.user_input(arg::tensor(sin));
  const uint32_t a = g.tensor("a", f32, shape), lo = g.tensor("lo", f32, half), hi = g.tensor("hi", f32, half),
                 negated = g.tensor("neg", f32, half), r = g.tensor("r", f32, shape), b = g.tensor("b", f32, shape),
                 out = g.tensor("out", f32, shape);
  const uint32_t mul = p.op("aten::mul", "Tensor"), slice = p.op("aten::slice", "Tensor");
  g.node("a", mul, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(cos)}}, {}, {arg::tensor(a)});
  g.node("lo", slice, Args{{"self", arg::tensor(x)}, {"dim", arg::integer(3)}, {"start", arg::integer(0)}, {"end", arg::integer(kHalf)}},
         {}, {arg::tensor(lo)});
  g.node("hi", slice,
         Args{{"self", arg::tensor(x)}, {"dim", arg::integer(3)}, {"start", arg::integer(kHalf)},
              {"end", arg::integer(std::numeric_limits<int64_t>::max())}},
         {}, {arg::tensor(hi)});
  g.node("neg", p.op("aten::neg", "default"), Args{{"self", arg::tensor(hi)}}, {}, {arg::tensor(negated)});
  const std::vector<uint32_t> parts = c.swapped_cat ? std::vector<uint32_t>{lo, negated} : std::vector<uint32_t>{negated, lo};
  g.node("r", p.op("aten::cat", "default"), Args{{"tensors", arg::tensors(parts)}, {"dim", arg::integer(-1)}}, {}, {arg::tensor(r)});
  g.node("b", mul, Args{{"self", arg::tensor(r)}, {"other", arg::tensor(sin)}}, {}, {arg::tensor(b)});
  g.node("out", p.op("aten::add", "Tensor"), Args{{"self", arg::tensor(a)}, {"other", arg::tensor(b)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  if (c.b_is_output) g.user_output(arg::tensor(b));
  return p.finish();
}

exec::Tensor input(const std::vector<int64_t>& sizes, int seed) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  return f32(sizes, sines(count, seed));
}

bool fused(const Executor& e) {
  for (const auto& node : e.plan().nodes) {
    if (!node.arg_names.empty() && node.arg_names[0] == exec::fused_chains::kRotaryInput) return true;
  }
  return false;
}

// Runs `c` fused and apart: the same bits. Returns whether it fused.
bool check_chain(const Chain& c, const std::string& label) {
  auto one = load_program(chain_program(c));
  Chain apart = c;
  apart.b_is_output = true;
  auto unfused = load_program(chain_program(apart));
  if (one == nullptr || unfused == nullptr) return false;
  EXPECT_FALSE(fused(*unfused)) << label << ": a graph output inside the chain must not be fused away";
  const std::vector<int64_t> x_sizes = c.transposed ? std::vector<int64_t>{1, kRows, kHeads, kLength}
                                                    : std::vector<int64_t>{1, kHeads, kRows, kLength};
  const NamedInputs inputs{{c.transposed ? "input" : "x", input(x_sizes, 1)},
                           {"cos", input({1, 1, kRows, kLength}, 2)},
                           {"sin", input({1, 1, kRows, kLength}, 3)}};
  auto got = one->run(inputs);
  auto want = unfused->run(inputs);
  if (!got.ok() || !want.ok()) {
    ADD_FAILURE() << label << ": " << (got.ok() ? want.error().to_string() : got.error().to_string());
    return false;
  }
  EXPECT_EQ(f32_bits((*got)[0].value), f32_bits((*want)[0].value)) << label;
  return fused(*one);
}

TEST(RotaryFusion, FusedChainsGiveTheBitsOfTheNodesRunApart) {
  EXPECT_TRUE(check_chain(Chain{}, "contiguous x"));
  Chain transposed;
  transposed.transposed = true;
  EXPECT_TRUE(check_chain(transposed, "x a transposed view"));
}

TEST(RotaryFusion, OtherChainsAreLeftAsTheyAre) {
  Chain swapped;
  swapped.swapped_cat = true;
  EXPECT_FALSE(check_chain(swapped, "cat([lo, -hi])"));
}

}  // namespace
}  // namespace nrt::testing
