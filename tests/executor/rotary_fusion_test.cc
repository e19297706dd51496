// Rotary embedding fusion (executor/runtime/rotary_fusion.h) through the executor with the CPU
// kernels: the chain torch.export writes for the Llama family runs as its first node and gives the
// bits of the same nodes run apart (the unfused program makes a value inside the chain a graph
// output, which the fusion must respect), on contiguous and transposed x with cos and sin
// broadcast over heads; chains that differ from the pattern are left as they are; the fused kernel
// writes its rows into an output laid out as the transposed x.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/executor.h"
#include "executor/runtime/fused_chains.h"
#include "executor/runtime/kernel.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"
#include "tests/executor/fused_and_apart.h"
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

exec::Tensor input(const std::vector<int64_t>& sizes, int seed) { return sine_f32(sizes, 0.53, seed, 2.0); }

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
  if (!same_bits_as_apart(*one, *unfused, inputs, label)) return false;
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

// torch lays the chain's result out as the transposed x ([1, heads, rows, 16] over the memory of
// [1, rows, heads, 16]); the kernel writes its rows there in place, each element x * cos plus the
// rotated half times sin, each product rounded.
TEST(RotaryFusion, TheFusedKernelWritesItsRowsIntoAnOutputLaidOutAsX) {
  const exec::Tensor input = testing::input({1, kRows, kHeads, kLength}, 1);
  const exec::Tensor x = input.as_strided({1, kHeads, kRows, kLength}, {kRows * kHeads * kLength, kLength, kHeads * kLength, 1}, 0);
  const exec::Tensor cos = testing::input({1, 1, kRows, kLength}, 2), sin = testing::input({1, 1, kRows, kLength}, 3);
  const exec::Tensor backing = exec::Tensor::empty(ScalarType::FLOAT32, {1, kRows, kHeads, kLength});
  const exec::Tensor out = backing.as_strided(x.sizes(), x.strides(), 0);
  const exec::KernelInfo* kernel = exec::KernelRegistry::global().find(exec::fused_chains::kRotaryTarget, exec::DeviceKind::kCpu);
  ASSERT_NE(kernel, nullptr);
  const exec::RuntimeValue x_value = x, cos_value = cos, sin_value = sin;
  const exec::NamedValue arguments[] = {{exec::fused_chains::kRotaryInput, &x_value},
                                        {exec::fused_chains::kRotaryCos, &cos_value},
                                        {exec::fused_chains::kRotarySin, &sin_value}};
  std::vector<exec::RuntimeValue> outputs{out};
  exec::KernelContext ctx(exec::fused_chains::kRotaryTarget, arguments, outputs, exec::Device{});
  ASSERT_TRUE(kernel->fn(ctx).ok());
  ASSERT_EQ(std::get<exec::Tensor>(outputs[0]).storage(), backing.storage());
  const float* xs = input.data<float>();
  const float* cs = cos.data<float>();
  const float* sn = sin.data<float>();
  for (int64_t h = 0; h < kHeads; ++h) {
    for (int64_t r = 0; r < kRows; ++r) {
      const int64_t row = (r * kHeads + h) * kLength;  // x's row and the output's, in memory
      for (int64_t j = 0; j < kLength; ++j) {
        const float turned = j < kHalf ? -xs[row + j + kHalf] : xs[row + j - kHalf];
        const float straight = xs[row + j] * cs[r * kLength + j];
        const float rotated = turned * sn[r * kLength + j];
        ASSERT_EQ(backing.data<float>()[row + j], straight + rotated) << "head " << h << ", row " << r << ", column " << j;
      }
    }
  }
}

}  // namespace
}  // namespace nrt::testing
