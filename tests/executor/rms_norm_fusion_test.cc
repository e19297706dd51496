// RMSNorm fusion (executor/runtime/rms_norm_fusion.h) through the executor with the CPU kernels:
// the chain torch.export writes for the Llama family runs as its first node and gives the bits of
// the same nodes run apart (the unfused program makes a value inside the chain a graph output,
// which the fusion must respect), with and without the check, the copy and the weight, at 1 and 3
// intra-op threads; chains that differ from the pattern are left as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "executor/runtime/executor.h"
#include "executor/runtime/fused_chains.h"
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
  std::vector<int64_t> sizes{2, 5, 19};  // 19: rows past the sum's four lanes
  bool checked = true;                   // _assert_tensor_metadata(y)
  bool copied = true;                    // y.to(float32)
  bool weighted = true;                  // weight * y
  bool weight_first = true;              // mul(weight, y), else mul(y, weight)
  double exponent = 2.0;
  int64_t dim = -1;
  double alpha = 1.0;        // add's alpha: m + alpha * eps (1: not given)
  bool r_is_output = false;  // rsqrt's result is a graph output too: no fusion
  bool y_is_output = false;  // so is x * r, which the weight's mul reads
};

std::vector<uint8_t> floats(int64_t count, int seed) {
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * 4);
  for (int64_t i = 0; i < count; ++i) {
    const auto f = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + seed) * 3.0);
    std::memcpy(bytes.data() + i * 4, &f, 4);
  }
  return bytes;
}

ProgramWithWeights chain_program(const Chain& c) {
  ProgramBuilder p("rms_norm_fusion_test");
  const int64_t length = c.sizes.back();
  std::vector<int64_t> column = c.sizes;
  column.back() = 1;
  p.weight("norm.weight", p.storage(floats(length, 5)), testdata::tensor_meta(ScalarType::FLOAT32, {length}), true);
  auto g = p.graph("main", true);
  const auto f32 = ScalarType::FLOAT32;
  const uint32_t weight = g.tensor("p_norm_weight", f32, {length}), x = g.tensor("x", f32, c.sizes);
  g.input(arg::tensor(weight), fb::InputKind::PARAMETER, "norm.weight");
  g.user_input(arg::tensor(x));
  const uint32_t squares = g.tensor("pow", f32, c.sizes), mean = g.tensor("mean", f32, column),
                 shifted = g.tensor("add", f32, column), r = g.tensor("rsqrt", f32, column),
                 y = g.tensor("mul", f32, c.sizes);
  g.node("pow", p.op("aten::pow", "Tensor_Scalar"), Args{{"self", arg::tensor(x)}, {"exponent", arg::real(c.exponent)}},
         {}, {arg::tensor(squares)});
  g.node("mean", p.op("aten::mean", "dim"),
         Args{{"self", arg::tensor(squares)}, {"dim", arg::integers({c.dim})}, {"keepdim", arg::boolean(true)}}, {},
         {arg::tensor(mean)});
  Args add_args{{"self", arg::tensor(mean)}, {"other", arg::real(1e-6)}};
  if (c.alpha != 1.0) add_args.emplace_back("alpha", arg::real(c.alpha));
  g.node("add", p.op("aten::add", "Tensor"), add_args, {}, {arg::tensor(shifted)});
  g.node("rsqrt", p.op("aten::rsqrt", "default"), Args{{"self", arg::tensor(shifted)}}, {}, {arg::tensor(r)});
  g.node("mul", p.op("aten::mul", "Tensor"), Args{{"self", arg::tensor(x)}, {"other", arg::tensor(r)}}, {},
         {arg::tensor(y)});
  uint32_t last = y;
  if (c.checked) {
    g.node("check", p.op("aten::_assert_tensor_metadata", "default"), Args{{"a", arg::tensor(y)}},
           Args{{"dtype", arg::scalar_type(f32)}}, {});
  }
  if (c.copied) {
    const uint32_t copy = g.tensor("to", f32, c.sizes);
    g.node("to", p.op("aten::to", "dtype"), Args{{"self", arg::tensor(y)}, {"dtype", arg::scalar_type(f32)}}, {},
           {arg::tensor(copy)});
    last = copy;
  }
  if (c.weighted) {
    const uint32_t out = g.tensor("scaled", f32, c.sizes);
    const uint32_t first = c.weight_first ? weight : last, second = c.weight_first ? last : weight;
    g.node("scaled", p.op("aten::mul", "Tensor"), Args{{"self", arg::tensor(first)}, {"other", arg::tensor(second)}},
           {}, {arg::tensor(out)});
    last = out;
  }
  g.user_output(arg::tensor(last));
  if (c.r_is_output) g.user_output(arg::tensor(r));
  if (c.y_is_output) g.user_output(arg::tensor(y));
  return p.finish();
}

exec::Tensor x_input(const std::vector<int64_t>& sizes) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  const std::vector<uint8_t> bytes = floats(count, 9);
  std::vector<float> values(static_cast<size_t>(count));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return f32(sizes, values);
}

bool fused(const Executor& e) {
  return e.plan().nodes[0].kernel.fn != nullptr && !e.plan().nodes[0].arg_names.empty() &&
         e.plan().nodes[0].arg_names[0] == exec::fused_chains::kRmsNormInput;
}

// Runs `c` fused and apart: the same bits. Returns whether it fused.
bool check_chain(const Chain& c, const std::string& label) {
  auto one = load_program(chain_program(c));
  Chain apart = c;
  apart.r_is_output = true;
  auto unfused = load_program(chain_program(apart));
  if (one == nullptr || unfused == nullptr) return false;
  EXPECT_FALSE(fused(*unfused)) << label << ": a graph output inside the chain must not be fused away";
  const NamedInputs inputs{{"x", x_input(c.sizes)}};
  if (!same_bits_as_apart(*one, *unfused, inputs, label, 1)) return false;  // the chain's result
  return fused(*one);
}

TEST(RmsNormFusion, FusedChainsGiveTheBitsOfTheNodesRunApart) {
  Chain full;
  EXPECT_TRUE(check_chain(full, "check, copy and weight"));
  // Every node after the first does nothing but the last, a view of the first's result.
  auto loaded = load_program(chain_program(full));
  ASSERT_NE(loaded, nullptr);
  const auto& nodes = loaded->plan().nodes;
  ASSERT_EQ(nodes.size(), 8u);
  for (size_t n = 1; n + 1 < nodes.size(); ++n) EXPECT_TRUE(nodes[n].arg_slots.empty()) << nodes[n].name;
  EXPECT_TRUE(nodes.back().kernel.is_view);

  Chain bare = full;
  bare.checked = bare.copied = false;
  EXPECT_TRUE(check_chain(bare, "weight only"));
  Chain swapped = full;
  swapped.weight_first = false;
  EXPECT_TRUE(check_chain(swapped, "mul(y, weight)"));
  Chain unweighted = full;
  unweighted.weighted = false;
  EXPECT_TRUE(check_chain(unweighted, "ends at the copy"));
  Chain plain = unweighted;
  plain.copied = false;
  EXPECT_TRUE(check_chain(plain, "ends at x * r, the check left reading it"));
  Chain last_dim = full;
  last_dim.dim = 2;
  EXPECT_TRUE(check_chain(last_dim, "the last dim by its index"));
  Chain wide = full;
  wide.sizes = {64, 300};  // 19200 floats: rows split over the threads
  EXPECT_TRUE(check_chain(wide, "rows over threads"));
}

TEST(RmsNormFusion, OtherChainsAreLeftAsTheyAre) {
  Chain cube;
  cube.exponent = 3.0;
  EXPECT_FALSE(check_chain(cube, "x.pow(3)"));
  Chain y_read;
  y_read.y_is_output = true;
  EXPECT_FALSE(check_chain(y_read, "x * r a graph output"));
  Chain scaled_eps;
  scaled_eps.alpha = 2.0;
  EXPECT_FALSE(check_chain(scaled_eps, "m + 2 * eps"));
}

}  // namespace
}  // namespace nrt::testing
