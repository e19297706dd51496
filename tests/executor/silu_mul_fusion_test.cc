// SiLU-mul fusion (executor/runtime/silu_mul_fusion.h) through the executor with the CPU kernels:
// silu(gate) * up, with `up` computed between the two as in the Llama family's feed-forward, runs
// at the mul and gives the bits of the nodes run apart (the unfused program makes silu's result a
// graph output, which the fusion must respect), over sizes with a short last block and sizes that
// split over threads, with up on either side of the mul; a broadcast `up` and a write in place
// between the two leave the nodes as they are; the kernel may write over gate's own memory.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
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

struct Chain {
  int64_t rows = 3, width = 1111;  // 3333 floats: three blocks of 1024 and a short one
  bool up_first = false;           // mul(up, s)
  bool broadcast_up = false;       // up [1, width]: not fused
  bool write_between = false;      // gate.mul_(2) between silu and mul: not fused
  bool s_is_output = false;        // silu's result is a graph output too: not fused
};

// s = silu(gate); up = a + b; out = s * up, where gate = x * x (a value the plan may reuse).
ProgramWithWeights chain_program(const Chain& c) {
  ProgramBuilder p("silu_mul_fusion_test");
  const auto f32 = ScalarType::FLOAT32;
  const std::vector<int64_t> shape{c.rows, c.width};
  const std::vector<int64_t> up_shape = c.broadcast_up ? std::vector<int64_t>{1, c.width} : shape;
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", f32, shape), a = g.tensor("a", f32, up_shape), b = g.tensor("b", f32, up_shape);
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(a));
  g.user_input(arg::tensor(b));
  const uint32_t mul = p.op("aten::mul", "Tensor");
  const uint32_t gate = g.tensor("gate", f32, shape), s = g.tensor("s", f32, shape), up = g.tensor("up", f32, up_shape),
                 out = g.tensor("out", f32, shape);
  g.node("gate", mul, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(gate)});
  g.node("s", p.op("aten::silu", "default"), Args{{"self", arg::tensor(gate)}}, {}, {arg::tensor(s)});
  g.node("up", p.op("aten::add", "Tensor"), Args{{"self", arg::tensor(a)}, {"other", arg::tensor(b)}}, {}, {arg::tensor(up)});
  uint32_t doubled = 0;
  if (c.write_between) {
    doubled = g.tensor("doubled", f32, shape);
    g.node("doubled", p.op("aten::mul_", "Scalar"), Args{{"self", arg::tensor(gate)}, {"other", arg::real(2.0)}}, {},
           {arg::tensor(doubled)});
  }
  const uint32_t left = c.up_first ? up : s, right = c.up_first ? s : up;
  g.node("out", mul, Args{{"self", arg::tensor(left)}, {"other", arg::tensor(right)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  if (c.write_between) g.user_output(arg::tensor(doubled));
  if (c.s_is_output) g.user_output(arg::tensor(s));
  return p.finish();
}

exec::Tensor input(const std::vector<int64_t>& sizes, int seed) { return sine_f32(sizes, 0.37, seed, 3.0); }

bool fused(const Executor& e) {
  for (const auto& node : e.plan().nodes) {
    if (!node.arg_names.empty() && node.arg_names[0] == exec::fused_chains::kSiluMulGate) return true;
  }
  return false;
}

// Runs `c` fused and apart: the same bits. Returns whether it fused.
bool check_chain(const Chain& c, const std::string& label) {
  auto one = load_program(chain_program(c));
  Chain apart = c;
  apart.s_is_output = true;
  auto unfused = load_program(chain_program(apart));
  if (one == nullptr || unfused == nullptr) return false;
  EXPECT_FALSE(fused(*unfused)) << label << ": a graph output inside the chain must not be fused away";
  const std::vector<int64_t> up_shape = c.broadcast_up ? std::vector<int64_t>{1, c.width} : std::vector<int64_t>{c.rows, c.width};
  const NamedInputs inputs{{"x", input({c.rows, c.width}, 1)}, {"a", input(up_shape, 2)}, {"b", input(up_shape, 3)}};
  if (!same_bits_as_apart(*one, *unfused, inputs, label)) return false;
  return fused(*one);
}

TEST(SiluMulFusion, FusedPairsGiveTheBitsOfTheNodesRunApart) {
  EXPECT_TRUE(check_chain(Chain{}, "silu(gate) * up, a short last block"));
  Chain swapped;
  swapped.up_first = true;
  EXPECT_TRUE(check_chain(swapped, "up * silu(gate)"));
  Chain large;
  large.rows = 37;
  large.width = 1000;  // 37 blocks: parts for three threads
  EXPECT_TRUE(check_chain(large, "37 blocks"));
  Chain tiny;
  tiny.rows = 1;
  tiny.width = 7;  // shorter than a vector
  EXPECT_TRUE(check_chain(tiny, "7 floats"));
}

TEST(SiluMulFusion, OtherPairsAreLeftAsTheyAre) {
  Chain broadcast;
  broadcast.broadcast_up = true;
  EXPECT_FALSE(check_chain(broadcast, "up broadcast over rows"));
  // Fused, the kernel would read gate after the write and give silu(2 * gate) * up.
  Chain written;
  written.write_between = true;
  EXPECT_FALSE(check_chain(written, "gate written in place between silu and mul"));
}

// The plan may give the result gate's memory: each block is read before it is written.
TEST(SiluMulFusion, TheKernelMayWriteOverGate) {
  const exec::KernelInfo* kernel = exec::KernelRegistry::global().find(exec::fused_chains::kSiluMulTarget, exec::DeviceKind::kCpu);
  ASSERT_NE(kernel, nullptr);
  const exec::Tensor gate = input({2, 1500}, 4), up = input({2, 1500}, 5);
  const std::vector<float> gates(gate.data<float>(), gate.data<float>() + gate.numel());
  const exec::RuntimeValue gate_value = gate, up_value = up;
  const exec::NamedValue arguments[] = {{exec::fused_chains::kSiluMulGate, &gate_value},
                                        {exec::fused_chains::kSiluMulUp, &up_value}};
  std::vector<exec::RuntimeValue> outputs{gate};
  exec::KernelContext ctx(exec::fused_chains::kSiluMulTarget, arguments, outputs, exec::Device{});
  ASSERT_TRUE(kernel->fn(ctx).ok());
  ASSERT_EQ(std::get<exec::Tensor>(outputs[0]).storage(), gate.storage());
  for (int64_t i = 0; i < gate.numel(); ++i) {
    const float v = gates[static_cast<size_t>(i)];
    const float want = v / (1.0f + std::exp(-v)) * up.data<float>()[i];
    ASSERT_NEAR(gate.data<float>()[i], want, 1e-5f * (1.0f + std::fabs(want))) << "element " << i;
  }
}

TEST(SiluMulFusion, MismatchedSizesAreAnError) {
  const exec::KernelInfo* kernel = exec::KernelRegistry::global().find(exec::fused_chains::kSiluMulTarget, exec::DeviceKind::kCpu);
  ASSERT_NE(kernel, nullptr);
  const exec::RuntimeValue gate_value = input({2, 8}, 1), up_value = input({1, 8}, 2);
  const exec::NamedValue arguments[] = {{exec::fused_chains::kSiluMulGate, &gate_value},
                                        {exec::fused_chains::kSiluMulUp, &up_value}};
  std::vector<exec::RuntimeValue> outputs(1);
  exec::KernelContext ctx(exec::fused_chains::kSiluMulTarget, arguments, outputs, exec::Device{});
  const Status status = kernel->fn(ctx);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("same sizes"), std::string::npos) << status.error().to_string();
}

}  // namespace
}  // namespace nrt::testing
