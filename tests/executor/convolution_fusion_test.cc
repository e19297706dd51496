// Convolution fusion (executor/runtime/convolution_fusion.h) through the executor with the CPU
// kernels: a conv -> batch_norm -> activation chain runs as one node and gives the values of the
// same chain run node by node (the unfused program makes the convolution's result a graph output
// too, which the fusion must respect), on the blocked oneDNN path (3x3, depthwise), the plain
// one (pointwise), and in float64; chains whose values something else reads are not fused. An
// inverted-residual block's expansion past the L2 runs inside its depthwise convolution.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <utility>

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

struct Block {
  ScalarType dtype = ScalarType::FLOAT32;
  int64_t kernel = 3;            // 3x3 (padding 1) or 1x1
  bool depthwise = false;        // groups = channels (kernel 3)
  bool batch_norm = true;
  std::string activation;        // "aten::hardtanh_", "aten::relu", "aten::silu_", ... or empty
  bool conv_is_output = false;   // the convolution's result is a graph output too: no fusion
  bool norm_is_output = false;   // the batch norm's result is a graph output too
  bool then_pointwise = false;   // a pointwise convolution reads the chain's result
  std::string residual;          // "aten::add_" (out += r, ResNet's) or "aten::add" (r + out), before the activation
  bool core_aten = false;        // the batch norm as core ATen's _native_batch_norm_legit_no_training
};

Block block(ScalarType dtype, int64_t kernel, bool depthwise, bool batch_norm, std::string activation,
            std::string residual = "") {
  Block b;
  b.dtype = dtype;
  b.kernel = kernel;
  b.depthwise = depthwise;
  b.batch_norm = batch_norm;
  b.activation = std::move(activation);
  b.residual = std::move(residual);
  return b;
}

constexpr int64_t kChannels = 8, kSide = 10;

int64_t out_channels(const Block& b) { return b.depthwise ? kChannels : 16; }

// Bytes of `count` values of `dtype` from a fixed pattern (positive where `positive`).
std::vector<uint8_t> pattern(ScalarType dtype, int64_t count, int seed, bool positive = false) {
  std::vector<uint8_t> bytes(static_cast<size_t>(count) * (dtype == ScalarType::FLOAT64 ? 8 : 4));
  for (int64_t i = 0; i < count; ++i) {
    double v = std::sin(0.7 * static_cast<double>(i) + seed) * 0.5;
    if (positive) v = 0.5 + std::abs(v);
    if (dtype == ScalarType::FLOAT64) {
      std::memcpy(bytes.data() + i * 8, &v, 8);
    } else {
      const auto f = static_cast<float>(v);
      std::memcpy(bytes.data() + i * 4, &f, 4);
    }
  }
  return bytes;
}

ProgramWithWeights block_program(const Block& b) {
  ProgramBuilder p("convolution_fusion_test");
  const int64_t oc = out_channels(b), taps = b.kernel * b.kernel, in_per_group = b.depthwise ? 1 : kChannels;
  const std::vector<int64_t> weight_sizes{oc, in_per_group, b.kernel, b.kernel}, per_channel{oc};
  const std::vector<int64_t> image{1, kChannels, kSide, kSide}, result{1, oc, kSide, kSide};
  p.weight("conv.weight", p.storage(pattern(b.dtype, oc * in_per_group * taps, 1)), testdata::tensor_meta(b.dtype, weight_sizes), true);
  p.weight("conv.bias", p.storage(pattern(b.dtype, oc, 2)), testdata::tensor_meta(b.dtype, per_channel), true);
  const char* bn_names[] = {"bn.weight", "bn.bias", "bn.running_mean", "bn.running_var"};
  for (int i = 0; i < 4; ++i) {
    p.weight(bn_names[i], p.storage(pattern(b.dtype, oc, 3 + i, i == 3)), testdata::tensor_meta(b.dtype, per_channel), i < 2);
  }
  if (b.then_pointwise) {
    p.weight("next.weight", p.storage(pattern(b.dtype, oc * oc, 7)), testdata::tensor_meta(b.dtype, {oc, oc, 1, 1}), true);
  }
  const uint32_t conv2d = p.op("aten::conv2d", "default"), batch_norm = p.op("aten::batch_norm", "default");
  auto g = p.graph("main", true);
  const uint32_t weight = g.tensor("p_conv_weight", b.dtype, weight_sizes), bias = g.tensor("p_conv_bias", b.dtype, per_channel);
  uint32_t bn[4];
  for (int i = 0; i < 4; ++i) bn[i] = g.tensor(std::string("bn_") + std::to_string(i), b.dtype, per_channel);
  const uint32_t x = g.tensor("x", b.dtype, image);
  g.input(arg::tensor(weight), fb::InputKind::PARAMETER, "conv.weight");
  g.input(arg::tensor(bias), fb::InputKind::PARAMETER, "conv.bias");
  for (int i = 0; i < 4; ++i) g.input(arg::tensor(bn[i]), i < 2 ? fb::InputKind::PARAMETER : fb::InputKind::BUFFER, bn_names[i]);
  g.user_input(arg::tensor(x));
  const uint32_t conv = g.tensor("conv", b.dtype, result);
  const int64_t padding = b.kernel / 2;
  g.node("conv", conv2d, Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(weight)}, {"bias", arg::optional_tensor(static_cast<int32_t>(bias))},
                              {"stride", arg::integers({1, 1})}, {"padding", arg::integers({padding, padding})},
                              {"dilation", arg::integers({1, 1})}, {"groups", arg::integer(b.depthwise ? kChannels : 1)}},
         {}, {arg::tensor(conv)});
  uint32_t last = conv;
  if (b.batch_norm) {
    const uint32_t norm = g.tensor("norm", b.dtype, result);
    if (b.core_aten) {
      const uint32_t mean = g.tensor("saved_mean", b.dtype, {0}), invstd = g.tensor("saved_invstd", b.dtype, {0});
      g.node("norm", p.op("aten::_native_batch_norm_legit_no_training", "default"),
             Args{{"input", arg::tensor(conv)}, {"weight", arg::optional_tensor(static_cast<int32_t>(bn[0]))},
                  {"bias", arg::optional_tensor(static_cast<int32_t>(bn[1]))}, {"running_mean", arg::tensor(bn[2])},
                  {"running_var", arg::tensor(bn[3])}, {"momentum", arg::real(0.1)}, {"eps", arg::real(1e-5)}},
             {}, {arg::tensor(norm), arg::tensor(mean), arg::tensor(invstd)});
    } else {
      g.node("norm", batch_norm,
             Args{{"input", arg::tensor(conv)}, {"weight", arg::optional_tensor(static_cast<int32_t>(bn[0]))},
                  {"bias", arg::optional_tensor(static_cast<int32_t>(bn[1]))}, {"running_mean", arg::optional_tensor(static_cast<int32_t>(bn[2]))},
                  {"running_var", arg::optional_tensor(static_cast<int32_t>(bn[3]))}, {"training", arg::boolean(false)},
                  {"momentum", arg::real(0.1)}, {"eps", arg::real(1e-5)}, {"cudnn_enabled", arg::boolean(false)}},
             {}, {arg::tensor(norm)});
    }
    last = norm;
  }
  const uint32_t norm_value = last;
  if (!b.residual.empty()) {
    const uint32_t r = g.tensor("r", b.dtype, result), sum = g.tensor("sum", b.dtype, result);
    g.user_input(arg::tensor(r));
    const bool in_place = b.residual == "aten::add_";
    g.node("sum", p.op(b.residual, "Tensor"),
           Args{{"self", arg::tensor(in_place ? last : r)}, {"other", arg::tensor(in_place ? r : last)}}, {}, {arg::tensor(sum)});
    last = sum;
  }
  if (!b.activation.empty()) {
    const uint32_t act = g.tensor("act", b.dtype, result);
    Args keyword;
    if (b.activation.find("hardtanh") != std::string::npos) keyword = {{"min_val", arg::real(0.0)}, {"max_val", arg::real(0.25)}};
    g.node("act", p.op(b.activation, "default"), Args{{"self", arg::tensor(last)}}, keyword, {arg::tensor(act)});
    last = act;
  }
  if (b.then_pointwise) {
    const uint32_t next = g.tensor("next", b.dtype, result);
    const uint32_t next_weight = g.tensor("p_next_weight", b.dtype, {oc, oc, 1, 1});
    g.input(arg::tensor(next_weight), fb::InputKind::PARAMETER, "next.weight");
    g.node("next", conv2d, Args{{"input", arg::tensor(last)}, {"weight", arg::tensor(next_weight)}}, {}, {arg::tensor(next)});
    last = next;
  }
  g.user_output(arg::tensor(last));
  if (b.conv_is_output) g.user_output(arg::tensor(conv));
  if (b.norm_is_output && norm_value != conv) g.user_output(arg::tensor(norm_value));
  return p.finish();
}

exec::Tensor image_input(ScalarType dtype) {
  auto bytes = pattern(dtype, kChannels * kSide * kSide, 9);
  exec::Tensor t = exec::Tensor::empty(dtype, {1, kChannels, kSide, kSide});
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

std::vector<double> values(const exec::RuntimeValue& value) {
  const auto& t = std::get<exec::Tensor>(value);
  std::vector<double> out;
  for (int64_t i = 0; i < t.numel(); ++i) {
    out.push_back(t.dtype() == ScalarType::FLOAT64 ? t.data<double>()[i] : t.data<float>()[i]);
  }
  return out;
}

// How many of `got`'s values lie further than atol + rtol * |want| from `want`'s (sizes checked).
size_t count_apart(const std::vector<double>& got, const std::vector<double>& want, double atol, double rtol) {
  EXPECT_EQ(got.size(), want.size());
  size_t apart = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) apart += std::abs(got[i] - want[i]) > atol + rtol * std::abs(want[i]);
  return apart;
}

// The outputs of two programs run on the same inputs, or nothing (the failure recorded, naming
// `label`) where either run fails.
using Outputs = std::vector<exec::NamedOutput>;
std::optional<std::pair<Outputs, Outputs>> run_both(Executor& first, Executor& second, const NamedInputs& inputs,
                                                    const std::string& label = "") {
  auto a = first.run(inputs);
  auto b = second.run(inputs);
  if (!a.ok() || !b.ok()) {
    ADD_FAILURE() << label << ": " << (a.ok() ? b.error().to_string() : a.error().to_string());
    return std::nullopt;
  }
  return std::make_pair(std::move(*a), std::move(*b));
}

// Runs both programs `runs` times on `inputs` (the later runs on what the first kept) and checks
// that their first outputs agree within atol + rtol * |want|, naming `label`.
void expect_close_runs(Executor& fused, Executor& apart, const NamedInputs& inputs, double atol, double rtol,
                       const std::string& label, int runs = 2) {
  for (int run = 0; run < runs; ++run) {
    auto both = run_both(fused, apart, inputs, label);
    ASSERT_TRUE(both.has_value());
    const auto& [got, want] = *both;
    EXPECT_EQ(count_apart(values(got[0].value), values(want[0].value), atol, rtol), 0u)
        << label << " run " << run << ": the values differ from the nodes run apart";
  }
}

// Runs `b` fused and unfused; returns whether the fused plan fused, and checks the values agree.
bool check_block(const Block& b, const std::string& label) {
  auto fused = load_program(block_program(b));
  Block apart = b;
  apart.conv_is_output = true;
  auto unfused = load_program(block_program(apart));
  if (fused == nullptr || unfused == nullptr) return false;
  EXPECT_FALSE(unfused->plan().nodes[1].kernel.is_view) << label << ": a graph output must not be fused away";
  auto channels_last = [](const Executor& e) {
    const auto& names = e.plan().nodes[0].arg_names;
    return std::find(names.begin(), names.end(), "nrt.channels_last_output") != names.end();
  };
  EXPECT_EQ(channels_last(*fused), b.then_pointwise && b.dtype == ScalarType::FLOAT32)
      << label << ": the result only a convolution reads is written channels-last";
  EXPECT_FALSE(channels_last(*unfused)) << label << ": a graph output is written contiguous";
  NamedInputs inputs{{"x", image_input(b.dtype)}};
  if (!b.residual.empty()) {
    auto bytes = pattern(b.dtype, out_channels(b) * kSide * kSide, 11);
    exec::Tensor r = exec::Tensor::empty(b.dtype, {1, out_channels(b), kSide, kSide});
    std::memcpy(r.raw_data(), bytes.data(), bytes.size());
    inputs.emplace("r", r);
  }
  for (int run = 0; run < 2; ++run) {  // the second run uses the kept folded weights
    auto runs = run_both(*fused, *unfused, inputs, label);
    if (!runs) return false;
    const auto& [got, want] = *runs;
    // Folding rounds the weights once more: float32 agrees to about its precision times the
    // reduction's length, float64 far closer.
    const double atol = b.dtype == ScalarType::FLOAT64 ? 1e-12 : 1e-5, rtol = b.dtype == ScalarType::FLOAT64 ? 1e-12 : 1e-4;
    EXPECT_EQ(count_apart(values(got[0].value), values(want[0].value), atol, rtol), 0u)
        << label << ": fused and unfused values differ";
  }
  // Every node but the convolutions became a view of the first one's result.
  bool fused_all = fused->plan().nodes.size() > 1;
  for (const auto& node : fused->plan().nodes) fused_all = fused_all && (node.target == "aten::conv2d.default" || node.kernel.is_view);
  return fused_all;
}

TEST(ConvolutionFusion, FusedChainsGiveTheValuesOfTheNodesRunApart) {
  struct Case {
    std::string label;
    Block block;
  };
  const Case cases[] = {
      {"3x3 + batch_norm + hardtanh_", block(ScalarType::FLOAT32, 3, false, true, "aten::hardtanh_")},
      {"depthwise + batch_norm + relu_", block(ScalarType::FLOAT32, 3, true, true, "aten::relu_")},
      {"pointwise + batch_norm + silu_", block(ScalarType::FLOAT32, 1, false, true, "aten::silu_")},
      {"pointwise + batch_norm + hardtanh", block(ScalarType::FLOAT32, 1, false, true, "aten::hardtanh")},
      {"3x3 + batch_norm", block(ScalarType::FLOAT32, 3, false, true, "")},
      {"3x3 + relu", block(ScalarType::FLOAT32, 3, false, false, "aten::relu")},
      {"float64 3x3 + batch_norm + silu", block(ScalarType::FLOAT64, 3, false, true, "aten::silu")},
      {"3x3 + batch_norm + add_ + relu_", block(ScalarType::FLOAT32, 3, false, true, "aten::relu_", "aten::add_")},
      {"depthwise + batch_norm + add", block(ScalarType::FLOAT32, 3, true, true, "", "aten::add")},
      {"pointwise + add + hardtanh_", block(ScalarType::FLOAT32, 1, false, false, "aten::hardtanh_", "aten::add")},
      {"float64 3x3 + batch_norm + add_ + relu", block(ScalarType::FLOAT64, 3, false, true, "aten::relu", "aten::add_")},
  };
  for (Case c : cases) {  // core ATen's batch norm
    if (!c.block.batch_norm) continue;
    c.block.core_aten = true;
    EXPECT_TRUE(check_block(c.block, c.label + " (core ATen)")) << c.label << " (core ATen): not fused";
  }
  for (Case c : cases) {  // the chain's result read by the next convolution alone
    c.block.then_pointwise = true;
    EXPECT_TRUE(check_block(c.block, c.label + " -> pointwise")) << c.label << ": not fused";
  }
  for (const Case& c : cases) EXPECT_TRUE(check_block(c.block, c.label)) << c.label << ": not fused";
}

TEST(ConvolutionFusion, AValueSomethingElseReadsEndsTheChain) {
  // The batch norm's result is a graph output: the batch norm fuses, the functional activation
  // reading that result does not (the output must hold it before the activation).
  Block b = block(ScalarType::FLOAT32, 3, false, true, "aten::relu");
  b.norm_is_output = true;
  auto executor = load_program(block_program(b));
  ASSERT_NE(executor, nullptr);
  const auto& nodes = executor->plan().nodes;
  ASSERT_EQ(nodes.size(), 3u);
  EXPECT_TRUE(nodes[1].kernel.is_view) << "the batch norm fuses";
  EXPECT_FALSE(nodes[2].kernel.is_view) << "relu reads a value the graph returns";
  auto outputs = executor->run(NamedInputs{{"x", image_input(ScalarType::FLOAT32)}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  const std::vector<double> activated = values((*outputs)[0].value), normed = values((*outputs)[1].value);
  bool some_negative = false;
  for (size_t i = 0; i < normed.size(); ++i) {
    EXPECT_EQ(activated[i], std::max(normed[i], 0.0));
    some_negative = some_negative || normed[i] < 0;
  }
  EXPECT_TRUE(some_negative) << "the batch norm's output was activated";
}

// A program's float32 weights: each stored from pattern() (seeds from `seed` on) and made a
// PARAMETER input of `g` named after it (its value "p_" + the name, dots as underscores). Returns
// the values, in order.
struct Weight {
  std::string name;
  std::vector<int64_t> sizes;
  bool positive = false;  // running variances
};
std::vector<uint32_t> float32_weights(ProgramBuilder& p, testdata::GraphBuilder& g, const std::vector<Weight>& weights,
                                      int seed) {
  std::vector<uint32_t> values;
  for (const Weight& w : weights) {
    int64_t count = 1;
    for (int64_t d : w.sizes) count *= d;
    p.weight(w.name, p.storage(pattern(ScalarType::FLOAT32, count, seed++, w.positive)),
             testdata::tensor_meta(ScalarType::FLOAT32, w.sizes), true);
    std::string value = "p_" + w.name;
    std::replace(value.begin(), value.end(), '.', '_');
    values.push_back(g.tensor(value, ScalarType::FLOAT32, w.sizes));
    g.input(arg::tensor(values.back()), fb::InputKind::PARAMETER, w.name);
  }
  return values;
}

// A squeeze-excitation block as torchvision's efficientnet has it: a depthwise convolution with
// silu, its global average pooled, two pointwise convolutions (silu, sigmoid) make a per-channel
// scale, `scale * x` feeds a pointwise projection. The pool's result is the second graph output.
// `product_is_output`: the mul's result is a third, which keeps the mul a node of its own.
// `negate_scale_between`: neg_ writes the scale in place after the mul, before the projection (its
// result a graph output), which must keep the mul too: the projection would read the new scale.
ProgramWithWeights squeeze_excitation_program(bool product_is_output, bool negate_scale_between = false) {
  constexpr int64_t kSqueezed = 4, kProjected = 8;
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("squeeze_excitation_test");
  const std::vector<int64_t> image{1, kChannels, kSide, kSide}, pooled{1, kChannels, 1, 1}, squeezed{1, kSqueezed, 1, 1};
  const std::vector<Weight> weights = {
      {"dw.weight", {kChannels, 1, 3, 3}}, {"fc1.weight", {kSqueezed, kChannels, 1, 1}}, {"fc1.bias", {kSqueezed}},
      {"fc2.weight", {kChannels, kSqueezed, 1, 1}}, {"fc2.bias", {kChannels}}, {"proj.weight", {kProjected, kChannels, 1, 1}}};
  const uint32_t conv2d = p.op("aten::conv2d", "default"), silu = p.op("aten::silu", "default");
  auto g = p.graph("main", true);
  const std::vector<uint32_t> w = float32_weights(p, g, weights, 30);
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  auto conv = [&](const std::string& name, uint32_t input, uint32_t weight, int32_t bias, int64_t groups,
                  int64_t padding, const std::vector<int64_t>& sizes) {
    const uint32_t out = g.tensor(name, f32, sizes);
    g.node(name, conv2d,
           Args{{"input", arg::tensor(input)}, {"weight", arg::tensor(weight)}, {"bias", arg::optional_tensor(bias)},
                {"stride", arg::integers({1, 1})}, {"padding", arg::integers({padding, padding})},
                {"dilation", arg::integers({1, 1})}, {"groups", arg::integer(groups)}},
           {}, {arg::tensor(out)});
    return out;
  };
  auto unary = [&](const std::string& name, uint32_t op, uint32_t input, const std::vector<int64_t>& sizes) {
    const uint32_t out = g.tensor(name, f32, sizes);
    g.node(name, op, Args{{"self", arg::tensor(input)}}, {}, {arg::tensor(out)});
    return out;
  };
  const uint32_t dw = conv("dw", x, w[0], -1, kChannels, 1, image);
  const uint32_t activated = unary("dw_silu", silu, dw, image);
  const uint32_t pool = g.tensor("pool", f32, pooled);
  g.node("pool", p.op("aten::adaptive_avg_pool2d", "default"),
         Args{{"self", arg::tensor(activated)}, {"output_size", arg::integers({1, 1})}}, {}, {arg::tensor(pool)});
  const uint32_t fc1 = unary("fc1_silu", silu, conv("fc1", pool, w[1], static_cast<int32_t>(w[2]), 1, 0, squeezed), squeezed);
  const uint32_t fc2 = conv("fc2", fc1, w[3], static_cast<int32_t>(w[4]), 1, 0, pooled);
  const uint32_t scale = unary("scale", p.op("aten::sigmoid", "default"), fc2, pooled);
  const uint32_t product = g.tensor("product", f32, image);
  g.node("product", p.op("aten::mul", "Tensor"), Args{{"self", arg::tensor(scale)}, {"other", arg::tensor(activated)}}, {},
         {arg::tensor(product)});
  const uint32_t negated = negate_scale_between ? unary("negated", p.op("aten::neg_", "default"), scale, pooled) : 0;
  const uint32_t projected = conv("proj", product, w[5], -1, 1, 0, {1, kProjected, kSide, kSide});
  g.user_output(arg::tensor(projected));
  g.user_output(arg::tensor(pool));
  if (negate_scale_between) g.user_output(arg::tensor(negated));
  if (product_is_output) g.user_output(arg::tensor(product));
  return p.finish();
}

bool has_argument(const exec::PlannedNode& node, std::string_view name) {
  return std::find(node.arg_names.begin(), node.arg_names.end(), name) != node.arg_names.end();
}

const exec::PlannedNode& node_named(const Executor& e, const std::string& name) {
  for (const auto& node : e.plan().nodes) {
    if (node.name == name) return node;
  }
  ADD_FAILURE() << "no node " << name;
  return e.plan().nodes.front();
}

TEST(ConvolutionFusion, ASqueezeExcitationScaleIsAppliedByTheNextConvolution) {
  auto fused = load_program(squeeze_excitation_program(false));
  auto apart = load_program(squeeze_excitation_program(true));
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(apart, nullptr);
  EXPECT_TRUE(node_named(*fused, "product").kernel.is_view) << "the mul became a view of its input";
  EXPECT_TRUE(has_argument(node_named(*fused, "proj"), "nrt.input_scale"));
  EXPECT_TRUE(has_argument(node_named(*fused, "dw"), "nrt.channels_last_output"))
      << "the pool and the projection read the depthwise result as it is";
  EXPECT_FALSE(node_named(*apart, "product").kernel.is_view) << "the graph returns the mul's result";
  EXPECT_FALSE(has_argument(node_named(*apart, "proj"), "nrt.input_scale"));
  EXPECT_FALSE(has_argument(node_named(*apart, "dw"), "nrt.channels_last_output"));
  const NamedInputs inputs{{"x", image_input(ScalarType::FLOAT32)}};
  for (int run = 0; run < 2; ++run) {
    auto runs = run_both(*fused, *apart, inputs);
    ASSERT_TRUE(runs.has_value());
    const auto& [got, want] = *runs;
    EXPECT_EQ(count_apart(values(got[0].value), values(want[0].value), 1e-6, 1e-5), 0u)
        << "run " << run << ": the fused block's values differ from the nodes run apart";
    // The pool sums each channel in one order, whichever layout it reads.
    EXPECT_EQ(values(got[1].value), values(want[1].value)) << "run " << run << ": the channels-last pool differs";
  }
}

TEST(ConvolutionFusion, AnInPlaceWriteBetweenTheScaleAndTheConvolutionKeepsTheMul) {
  auto kept = load_program(squeeze_excitation_program(false, true));
  auto apart = load_program(squeeze_excitation_program(true, true));
  ASSERT_NE(kept, nullptr);
  ASSERT_NE(apart, nullptr);
  EXPECT_FALSE(node_named(*kept, "product").kernel.is_view);
  EXPECT_FALSE(has_argument(node_named(*kept, "proj"), "nrt.input_scale"));
  const NamedInputs inputs{{"x", image_input(ScalarType::FLOAT32)}};
  auto runs = run_both(*kept, *apart, inputs);
  ASSERT_TRUE(runs.has_value());
  const auto& [got, want] = *runs;
  EXPECT_EQ(values(got[0].value), values(want[0].value)) << "the projection saw the scale the mul read";
  const std::vector<double> negated = values(got[2].value);
  EXPECT_TRUE(std::all_of(negated.begin(), negated.end(), [](double v) { return v < 0; })) << "neg_ ran on the sigmoid";
}

// A ResNet stem: a 3x3 convolution with relu, a 3x3 max pool of stride 2, a convolution after it.
// The pool reads the stem's result channels-last and writes its own so for the next convolution
// (pooling_kernels.cc); `pool_is_output`: the pool's result is a graph output too, which keeps
// both contiguous.
ProgramWithWeights stem_program(bool pool_is_output) {
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("stem_pool_test");
  const std::vector<int64_t> image{1, kChannels, kSide, kSide}, pooled{1, kChannels, kSide / 2, kSide / 2};
  const std::vector<int64_t> weight{kChannels, kChannels, 3, 3};
  const auto f32_weight = [&](const std::string& name, int seed) {
    p.weight(name, p.storage(pattern(f32, kChannels * kChannels * 9, seed)), testdata::tensor_meta(f32, weight), true);
  };
  f32_weight("stem.weight", 50);
  f32_weight("next.weight", 51);
  const uint32_t conv2d = p.op("aten::conv2d", "default");
  auto g = p.graph("main", true);
  const uint32_t w_stem = g.tensor("p_stem_weight", f32, weight), w_next = g.tensor("p_next_weight", f32, weight);
  g.input(arg::tensor(w_stem), fb::InputKind::PARAMETER, "stem.weight");
  g.input(arg::tensor(w_next), fb::InputKind::PARAMETER, "next.weight");
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  auto conv = [&](const std::string& name, uint32_t input, uint32_t w, const std::vector<int64_t>& sizes) {
    const uint32_t out = g.tensor(name, f32, sizes);
    g.node(name, conv2d,
           Args{{"input", arg::tensor(input)}, {"weight", arg::tensor(w)}, {"bias", arg::optional_tensor(-1)},
                {"stride", arg::integers({1, 1})}, {"padding", arg::integers({1, 1})}},
           {}, {arg::tensor(out)});
    return out;
  };
  const uint32_t stem = conv("stem", x, w_stem, image);
  const uint32_t relu = g.tensor("relu", f32, image);
  g.node("relu", p.op("aten::relu", "default"), Args{{"self", arg::tensor(stem)}}, {}, {arg::tensor(relu)});
  const uint32_t pool = g.tensor("pool", f32, pooled);
  g.node("pool", p.op("aten::max_pool2d", "default"),
         Args{{"self", arg::tensor(relu)}, {"kernel_size", arg::integers({3, 3})}, {"stride", arg::integers({2, 2})},
              {"padding", arg::integers({1, 1})}},
         {}, {arg::tensor(pool)});
  g.user_output(arg::tensor(conv("next", pool, w_next, pooled)));
  if (pool_is_output) g.user_output(arg::tensor(pool));
  return p.finish();
}

TEST(ConvolutionFusion, AMaxPoolBetweenConvolutionsStaysChannelsLast) {
  auto fused = load_program(stem_program(false));
  auto apart = load_program(stem_program(true));
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(apart, nullptr);
  EXPECT_TRUE(has_argument(node_named(*fused, "stem"), "nrt.channels_last_output"));
  EXPECT_TRUE(has_argument(node_named(*fused, "pool"), "nrt.channels_last_output"));
  EXPECT_FALSE(has_argument(node_named(*apart, "stem"), "nrt.channels_last_output"));
  EXPECT_FALSE(has_argument(node_named(*apart, "pool"), "nrt.channels_last_output"));
  expect_close_runs(*fused, *apart, {{"x", image_input(ScalarType::FLOAT32)}}, 1e-6, 1e-5, "the channels-last pool's chain");
}

// A classifier's head: a pointwise convolution (16 channels, relu) whose result only a global
// average pool reads, the pool's result the graph's output. `convolution_is_output`: the
// convolution's result is a graph output too, which keeps it contiguous.
ProgramWithWeights pooled_head_program(bool convolution_is_output) {
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("pooled_head_test");
  auto g = p.graph("main", true);
  const std::vector<uint32_t> w = float32_weights(p, g, {{"head.weight", {16, kChannels, 1, 1}}}, 70);
  const std::vector<int64_t> image{1, kChannels, kSide, kSide}, head{1, 16, kSide, kSide};
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  const uint32_t conv = g.tensor("head", f32, head), relu = g.tensor("relu", f32, head);
  const uint32_t pool = g.tensor("pool", f32, {1, 16, 1, 1});
  g.node("head", p.op("aten::conv2d", "default"), Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(w[0])}}, {},
         {arg::tensor(conv)});
  g.node("relu", p.op("aten::relu", "default"), Args{{"self", arg::tensor(conv)}}, {}, {arg::tensor(relu)});
  g.node("pool", p.op("aten::adaptive_avg_pool2d", "default"),
         Args{{"self", arg::tensor(relu)}, {"output_size", arg::integers({1, 1})}}, {}, {arg::tensor(pool)});
  g.user_output(arg::tensor(pool));
  if (convolution_is_output) g.user_output(arg::tensor(relu));
  return p.finish();
}

TEST(ConvolutionFusion, AResultOnlyAGlobalPoolReadsIsWrittenChannelsLast) {
  // mobilenet_v2's last convolution (320 -> 1280 at 7x7) then ran on oneDNN with an NCHW output
  // and its pool over planes: 0.50 + 0.024 ms, against 0.42 + 0.009 channels-last.
  auto fused = load_program(pooled_head_program(false));
  auto apart = load_program(pooled_head_program(true));
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(apart, nullptr);
  EXPECT_TRUE(has_argument(node_named(*fused, "head"), "nrt.channels_last_output"));
  EXPECT_FALSE(has_argument(node_named(*apart, "head"), "nrt.channels_last_output"));
  expect_close_runs(*fused, *apart, {{"x", image_input(ScalarType::FLOAT32)}}, 1e-6, 1e-5, "the channels-last head");
}

// One loaded program run from several threads at once: oneDNN primitives shared by the runs each
// get the calling thread's scratchpad (with the library's own, concurrent runs of one primitive
// overwrote each other's).
TEST(ConvolutionFusion, RunsFromSeveralThreadsAtOnceGiveOneThreadsValues) {
  Block b = block(ScalarType::FLOAT32, 3, false, true, "aten::relu_", "aten::add_");
  b.then_pointwise = true;
  auto executor = load_program(block_program(b));
  ASSERT_NE(executor, nullptr);
  constexpr int kThreads = 4, kRuns = 40;
  std::vector<NamedInputs> inputs(kThreads);
  std::vector<std::vector<double>> expected(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    inputs[t] = {{"x", image_input(ScalarType::FLOAT32)}};
    auto residual = pattern(ScalarType::FLOAT32, out_channels(b) * kSide * kSide, 20 + t);
    exec::Tensor r = exec::Tensor::empty(ScalarType::FLOAT32, {1, out_channels(b), kSide, kSide});
    std::memcpy(r.raw_data(), residual.data(), residual.size());
    inputs[t].emplace("r", r);
    auto outputs = executor->run(inputs[t]);
    ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
    expected[t] = values((*outputs)[0].value);
  }
  ASSERT_NE(expected[0], expected[1]);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int run = 0; run < kRuns; ++run) {
        auto outputs = executor->run(inputs[t]);
        if (!outputs.ok() || values((*outputs)[0].value) != expected[t]) ++mismatches;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// An inverted-residual block as mobilenet_v2's (efficientnet's with silu): a pointwise expansion
// 8 -> 64 channels, a 3x3 depthwise convolution of `stride`, each with batch norm and
// `activation`, a pointwise projection to 16. `side`: the image's; `expansion_is_output`: the
// expansion's activated result is a second graph output, which keeps the block apart. `stem`: a
// pointwise convolution before the block, whose result the expansion reads channels-last (as in a
// model); without it the expansion reads the graph's input, contiguous. `depthwise_bias`: the
// elements of a bias the depthwise convolution adds (0: none).
ProgramWithWeights inverted_residual_program(int64_t side, int64_t stride, const std::string& activation,
                                            bool expansion_is_output, bool stem = true, int64_t depthwise_bias = 0) {
  constexpr int64_t kExpanded = 64, kProjected = 16;
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("inverted_residual_test");
  const int64_t out_side = (side + 2 - 3) / stride + 1;
  const std::vector<int64_t> image{1, kChannels, side, side}, expanded{1, kExpanded, side, side};
  const std::vector<int64_t> convolved{1, kExpanded, out_side, out_side}, projected{1, kProjected, out_side, out_side};
  std::vector<Weight> weights = {{"expand.weight", {kExpanded, kChannels, 1, 1}}, {"dw.weight", {kExpanded, 1, 3, 3}},
                                 {"project.weight", {kProjected, kExpanded, 1, 1}}, {"stem.weight", {kChannels, kChannels, 1, 1}}};
  for (const char* norm : {"bn1", "bn2"}) {
    for (const char* part : {"weight", "bias", "running_mean", "running_var"}) {
      weights.push_back({std::string(norm) + "." + part, {kExpanded}, std::string(part) == "running_var"});
    }
  }
  if (depthwise_bias > 0) weights.push_back({"dw.bias", {depthwise_bias}});
  const uint32_t conv2d = p.op("aten::conv2d", "default"), batch_norm = p.op("aten::batch_norm", "default");
  const uint32_t act_op = p.op(activation, "default");
  auto g = p.graph("main", true);
  const std::vector<uint32_t> w = float32_weights(p, g, weights, 60);
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  // conv -> batch_norm -> activation, the batch norm's parameters from w[first].
  auto layer = [&](const std::string& name, uint32_t input, uint32_t weight, int64_t s, int64_t padding, int64_t groups,
                   size_t first, const std::vector<int64_t>& sizes, int32_t bias = -1) {
    const uint32_t conv = g.tensor(name, f32, sizes), norm = g.tensor(name + "_bn", f32, sizes);
    const uint32_t act = g.tensor(name + "_act", f32, sizes);
    g.node(name, conv2d,
           Args{{"input", arg::tensor(input)}, {"weight", arg::tensor(weight)}, {"bias", arg::optional_tensor(bias)},
                {"stride", arg::integers({s, s})}, {"padding", arg::integers({padding, padding})},
                {"dilation", arg::integers({1, 1})}, {"groups", arg::integer(groups)}},
           {}, {arg::tensor(conv)});
    g.node(name + "_bn", batch_norm,
           Args{{"input", arg::tensor(conv)}, {"weight", arg::optional_tensor(static_cast<int32_t>(w[first]))},
                {"bias", arg::optional_tensor(static_cast<int32_t>(w[first + 1]))},
                {"running_mean", arg::optional_tensor(static_cast<int32_t>(w[first + 2]))},
                {"running_var", arg::optional_tensor(static_cast<int32_t>(w[first + 3]))}, {"training", arg::boolean(false)},
                {"momentum", arg::real(0.1)}, {"eps", arg::real(1e-5)}, {"cudnn_enabled", arg::boolean(false)}},
           {}, {arg::tensor(norm)});
    Args keyword;
    if (activation.find("hardtanh") != std::string::npos) keyword = {{"min_val", arg::real(0.0)}, {"max_val", arg::real(0.25)}};
    g.node(name + "_act", act_op, Args{{"self", arg::tensor(norm)}}, keyword, {arg::tensor(act)});
    return act;
  };
  uint32_t input = x;
  if (stem) {
    input = g.tensor("stem", f32, image);
    g.node("stem", conv2d, Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(w[3])}}, {}, {arg::tensor(input)});
  }
  const uint32_t expansion = layer("expand", input, w[0], 1, 0, 1, 4, expanded);
  const uint32_t depthwise = layer("dw", expansion, w[1], stride, 1, kExpanded, 8, convolved,
                                   depthwise_bias > 0 ? static_cast<int32_t>(w.back()) : -1);
  const uint32_t projection = g.tensor("project", f32, projected);
  g.node("project", conv2d, Args{{"input", arg::tensor(depthwise)}, {"weight", arg::tensor(w[2])}}, {},
         {arg::tensor(projection)});
  g.user_output(arg::tensor(projection));
  if (expansion_is_output) g.user_output(arg::tensor(expansion));
  return p.finish();
}

NamedInputs image_of_side(int64_t side) {
  auto bytes = pattern(ScalarType::FLOAT32, kChannels * side * side, 9);
  exec::Tensor t = exec::Tensor::empty(ScalarType::FLOAT32, {1, kChannels, side, side});
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return NamedInputs{{"x", t}};
}

TEST(ConvolutionFusion, AnExpansionPastTheL2RunsInsideItsDepthwiseConvolution) {
  // 96x96 images: the expansion's result is 2.25 MiB, past the fused bound (convolution_fusion.cc).
  // Read channels-last, the block runs in one pass (expanded_depthwise.h); from the contiguous
  // graph input, the kernel expands into a tensor of its own first.
  struct Case {
    std::string activation;
    int64_t stride;
    bool stem;
  };
  const Case cases[] = {{"aten::hardtanh_", 1, true}, {"aten::hardtanh_", 2, true}, {"aten::silu", 1, true},
                        {"aten::silu", 2, true},      {"aten::hardtanh_", 2, false}};
  for (const auto& [activation, stride, stem] : cases) {
    {
      const std::string label = activation + " stride " + std::to_string(stride) + (stem ? "" : " from the input");
      auto fused = load_program(inverted_residual_program(96, stride, activation, false, stem));
      auto apart = load_program(inverted_residual_program(96, stride, activation, true, stem));
      ASSERT_NE(fused, nullptr);
      ASSERT_NE(apart, nullptr);
      EXPECT_TRUE(has_argument(node_named(*fused, "dw"), "nrt.expansion.weight")) << label;
      EXPECT_TRUE(node_named(*fused, "expand").arg_names.empty()) << label << ": the expansion's node does nothing";
      EXPECT_FALSE(has_argument(node_named(*apart, "dw"), "nrt.expansion.weight"))
          << label << ": the graph returns the expansion's result";
      for (int run = 0; run < 2; ++run) {  // the second on the kept weights
        auto runs = run_both(*fused, *apart, image_of_side(96), label);
        ASSERT_TRUE(runs.has_value());
        const auto& [got, want] = *runs;
        EXPECT_EQ(count_apart(values(got[0].value), values(want[0].value), 1e-5, 1e-4), 0u)
            << label << " run " << run << ": the fused block's values differ from the nodes run apart";
      }
    }
  }
}

TEST(ConvolutionFusion, AFusedDepthwiseBiasOfTheWrongSizeIsAnError) {
  // 63 elements for 64 channels: the one pass must not read past them (the pass once checked only
  // the bias's dtype), and the convolution it leaves the block to says what is wrong.
  auto executor = load_program(inverted_residual_program(96, 1, "aten::hardtanh_", false, true, 63));
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(has_argument(node_named(*executor, "dw"), "nrt.expansion.weight"));
  auto outputs = executor->run(image_of_side(96));
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.error().to_string().find("bias"), std::string::npos) << outputs.error().to_string();
}

TEST(ConvolutionFusion, AnExpansionTheL2HoldsStaysANodeOfItsOwn) {
  // 32x32: 256 KiB, which the depthwise convolution reads from the L2 as fast apart.
  auto executor = load_program(inverted_residual_program(32, 1, "aten::hardtanh_", false));
  ASSERT_NE(executor, nullptr);
  EXPECT_FALSE(has_argument(node_named(*executor, "dw"), "nrt.expansion.weight"));
  EXPECT_TRUE(has_argument(node_named(*executor, "expand"), "nrt.channels_last_output"));
  auto outputs = executor->run(image_of_side(32));
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
}

// An inverted-residual block's second half as mobilenet_v2's: a depthwise convolution of
// `stride` over 32 channels with batch norm and `activation`, then a pointwise projection to 32
// with batch norm, `residual`: plus the block's input (stride 1), read by a pointwise head. The
// block's input comes from a pointwise stem over the graph's input, channels-last; without the
// stem the depthwise convolution reads the graph's input, contiguous. `depthwise_is_output`: the
// depthwise convolution's activated result is a second graph output, which keeps the block
// apart. `depthwise_bias`: the elements of a bias the depthwise convolution adds (0: none).
ProgramWithWeights projected_block_program(int64_t side, int64_t stride, const std::string& activation, bool residual,
                                           bool depthwise_is_output, bool stem = true, int64_t depthwise_bias = 0) {
  constexpr int64_t kWide = 32;
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("projected_block_test");
  const int64_t out_side = (side + 2 - 3) / stride + 1;
  const int64_t in_channels = stem ? kChannels : kWide;
  const std::vector<int64_t> image{1, in_channels, side, side}, wide{1, kWide, side, side};
  const std::vector<int64_t> convolved{1, kWide, out_side, out_side}, head{1, kChannels, out_side, out_side};
  std::vector<Weight> weights = {{"stem.weight", {kWide, kChannels, 1, 1}}, {"dw.weight", {kWide, 1, 3, 3}},
                                 {"project.weight", {kWide, kWide, 1, 1}}, {"head.weight", {kChannels, kWide, 1, 1}}};
  for (const char* norm : {"bn1", "bn2"}) {
    for (const char* part : {"weight", "bias", "running_mean", "running_var"}) {
      weights.push_back({std::string(norm) + "." + part, {kWide}, std::string(part) == "running_var"});
    }
  }
  if (depthwise_bias > 0) weights.push_back({"dw.bias", {depthwise_bias}});
  const uint32_t conv2d = p.op("aten::conv2d", "default"), batch_norm = p.op("aten::batch_norm", "default");
  auto g = p.graph("main", true);
  const std::vector<uint32_t> w = float32_weights(p, g, weights, 80);
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  auto conv = [&](const std::string& name, uint32_t input, uint32_t weight, int64_t s, int64_t padding, int64_t groups,
                  const std::vector<int64_t>& sizes, int32_t bias = -1) {
    const uint32_t out = g.tensor(name, f32, sizes);
    g.node(name, conv2d,
           Args{{"input", arg::tensor(input)}, {"weight", arg::tensor(weight)}, {"bias", arg::optional_tensor(bias)},
                {"stride", arg::integers({s, s})}, {"padding", arg::integers({padding, padding})},
                {"dilation", arg::integers({1, 1})}, {"groups", arg::integer(groups)}},
           {}, {arg::tensor(out)});
    return out;
  };
  auto norm = [&](const std::string& name, uint32_t input, size_t first, const std::vector<int64_t>& sizes) {
    const uint32_t out = g.tensor(name, f32, sizes);
    g.node(name, batch_norm,
           Args{{"input", arg::tensor(input)}, {"weight", arg::optional_tensor(static_cast<int32_t>(w[first]))},
                {"bias", arg::optional_tensor(static_cast<int32_t>(w[first + 1]))},
                {"running_mean", arg::optional_tensor(static_cast<int32_t>(w[first + 2]))},
                {"running_var", arg::optional_tensor(static_cast<int32_t>(w[first + 3]))}, {"training", arg::boolean(false)},
                {"momentum", arg::real(0.1)}, {"eps", arg::real(1e-5)}, {"cudnn_enabled", arg::boolean(false)}},
           {}, {arg::tensor(out)});
    return out;
  };
  const uint32_t block_input = stem ? conv("stem", x, w[0], 1, 0, 1, wide) : x;
  const uint32_t dw = conv("dw", block_input, w[1], stride, 1, kWide, convolved,
                           depthwise_bias > 0 ? static_cast<int32_t>(w.back()) : -1);
  const uint32_t dw_bn = norm("dw_bn", dw, 4, convolved);
  const uint32_t act = g.tensor("dw_act", f32, convolved);
  Args keyword;
  if (activation.find("hardtanh") != std::string::npos) keyword = {{"min_val", arg::real(0.0)}, {"max_val", arg::real(0.25)}};
  g.node("dw_act", p.op(activation, "default"), Args{{"self", arg::tensor(dw_bn)}}, keyword, {arg::tensor(act)});
  uint32_t projected = norm("project_bn", conv("project", act, w[2], 1, 0, 1, convolved), 8, convolved);
  if (residual) {
    const uint32_t sum = g.tensor("sum", f32, convolved);
    g.node("sum", p.op("aten::add", "Tensor"), Args{{"self", arg::tensor(projected)}, {"other", arg::tensor(block_input)}},
           {}, {arg::tensor(sum)});
    projected = sum;
  }
  g.user_output(arg::tensor(conv("head", projected, w[3], 1, 0, 1, head)));
  if (depthwise_is_output) g.user_output(arg::tensor(act));
  return p.finish();
}

NamedInputs projected_block_input(int64_t side, bool stem) {
  const int64_t channels = stem ? kChannels : 32;
  auto bytes = pattern(ScalarType::FLOAT32, channels * side * side, 9);
  exec::Tensor t = exec::Tensor::empty(ScalarType::FLOAT32, {1, channels, side, side});
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return NamedInputs{{"x", t}};
}

TEST(ConvolutionFusion, AWideDepthwiseConvolutionRunsInsideItsProjection) {
  // 48x48 at stride 1 and 112x112 at stride 2: depthwise results of 288 and 392 KiB in rows of 48
  // and 56, past the fused bound (convolution_fusion.cc). Read channels-last, the block runs in
  // one pass (projected_depthwise.h); from the contiguous graph input, the kernel convolves into
  // a tensor of its own first.
  struct Case {
    std::string activation;
    int64_t side, stride;
    bool residual, stem;
  };
  const Case cases[] = {{"aten::hardtanh_", 48, 1, true, true}, {"aten::hardtanh_", 112, 2, false, true},
                        {"aten::silu", 48, 1, false, true},     {"aten::relu", 112, 2, false, true},
                        {"aten::hardtanh_", 48, 1, false, false}};
  for (const auto& [activation, side, stride, residual, stem] : cases) {
    const std::string label = activation + " stride " + std::to_string(stride) + (residual ? " residual" : "") +
                              (stem ? "" : " from the input");
    auto fused = load_program(projected_block_program(side, stride, activation, residual, false, stem));
    auto apart = load_program(projected_block_program(side, stride, activation, residual, true, stem));
    ASSERT_NE(fused, nullptr);
    ASSERT_NE(apart, nullptr);
    EXPECT_TRUE(has_argument(node_named(*fused, "project"), "nrt.depthwise.weight")) << label;
    EXPECT_EQ(has_argument(node_named(*fused, "project"), "nrt.residual"), residual) << label;
    EXPECT_TRUE(node_named(*fused, "dw").arg_names.empty()) << label << ": the depthwise node does nothing";
    EXPECT_FALSE(has_argument(node_named(*apart, "project"), "nrt.depthwise.weight"))
        << label << ": the graph returns the depthwise result";
    expect_close_runs(*fused, *apart, projected_block_input(side, stem), 1e-5, 1e-4, label);
  }
}

TEST(ConvolutionFusion, AFusedProjectionsDepthwiseBiasOfTheWrongSizeIsAnError) {
  // 31 elements for 32 channels: the kernel must say so rather than read past them.
  auto executor = load_program(projected_block_program(48, 1, "aten::hardtanh_", false, false, true, 31));
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(has_argument(node_named(*executor, "project"), "nrt.depthwise.weight"));
  auto outputs = executor->run(projected_block_input(48, true));
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.error().to_string().find("bias"), std::string::npos) << outputs.error().to_string();
}

TEST(ConvolutionFusion, ANarrowOrSmallDepthwiseResultStaysANodeOfItsOwn) {
  // 24x24 at stride 1 (72 KiB) and 48x48 at stride 2 (rows of 24): the projection reads them from
  // the L2 as fast apart.
  for (const auto& [side, stride] : {std::pair<int64_t, int64_t>{24, 1}, {48, 2}}) {
    auto executor = load_program(projected_block_program(side, stride, "aten::hardtanh_", false, false));
    ASSERT_NE(executor, nullptr);
    EXPECT_FALSE(has_argument(node_named(*executor, "project"), "nrt.depthwise.weight")) << side;
    EXPECT_TRUE(has_argument(node_named(*executor, "dw"), "nrt.channels_last_output")) << side;
    auto outputs = executor->run(projected_block_input(side, true));
    ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  }
}

// A float32 tensor of `sizes` from the fixed pattern of `seed`.
exec::Tensor patterned(const std::vector<int64_t>& sizes, int seed) {
  int64_t count = 1;
  for (int64_t d : sizes) count *= d;
  auto bytes = pattern(ScalarType::FLOAT32, count, seed);
  exec::Tensor t = exec::Tensor::empty(ScalarType::FLOAT32, sizes);
  std::memcpy(t.raw_data(), bytes.data(), bytes.size());
  return t;
}

size_t node_index(const Executor& e, const std::string& name) {
  return static_cast<size_t>(&node_named(e, name) - e.plan().nodes.data());
}

TEST(ConvolutionFusion, AConvolutionKeepsItsCallAndReadsEachRunsTensors) {
  // A fused residual (a graph input), a squeeze-excitation scale and a plain input: after the
  // first run each convolution runs from what it kept (kernel_state.h), with the tensors of the
  // run at hand; its values are a fresh executor's on the same inputs, bit for bit.
  Block b = block(ScalarType::FLOAT32, 3, false, true, "aten::relu_", "aten::add_");
  b.then_pointwise = true;
  struct Program {
    std::string label;
    ProgramWithWeights program;
    std::vector<std::string> kept;  // the convolution nodes that keep their call
    std::function<NamedInputs(int)> inputs;
  };
  std::vector<Program> programs;
  programs.push_back({"residual", block_program(b), {"conv", "next"}, [](int seed) {
                        return NamedInputs{{"x", patterned({1, kChannels, kSide, kSide}, seed)},
                                           {"r", patterned({1, 16, kSide, kSide}, seed + 1)}};
                      }});
  programs.push_back({"squeeze-excitation", squeeze_excitation_program(false), {"dw", "proj"}, [](int seed) {
                        return NamedInputs{{"x", patterned({1, kChannels, kSide, kSide}, seed)}};
                      }});
  for (Program& p : programs) {
    auto kept = load_program(p.program);
    ASSERT_NE(kept, nullptr) << p.label;
    for (int seed : {20, 30, 20, 40}) {
      auto fresh = load_program(p.program);
      ASSERT_NE(fresh, nullptr) << p.label;
      auto runs = run_both(*kept, *fresh, p.inputs(seed), p.label);
      ASSERT_TRUE(runs.has_value());
      const auto& [got, want] = *runs;
      for (size_t o = 0; o < want.size(); ++o) {
        EXPECT_EQ(values(got[o].value), values(want[o].value)) << p.label << " seed " << seed << " output " << o;
      }
      for (const std::string& name : p.kept) {
        EXPECT_NE(kept->frame().kept_state(node_index(*kept, name)), nullptr) << p.label << ": " << name;
      }
    }
  }
}

// A 3x3 convolution (with batch norm and relu) over 8 channels whose bias has `bias_elements`,
// read by a pointwise convolution: the first runs fused, channels-last.
ProgramWithWeights biased_block_program(int64_t bias_elements) {
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("biased_block_test");
  auto g = p.graph("main", true);
  std::vector<Weight> weights = {{"conv.weight", {kChannels, kChannels, 3, 3}}, {"conv.bias", {bias_elements}},
                                 {"next.weight", {kChannels, kChannels, 1, 1}}};
  for (const char* part : {"weight", "bias", "running_mean", "running_var"}) {
    weights.push_back({std::string("bn.") + part, {kChannels}, std::string(part) == "running_var"});
  }
  const std::vector<uint32_t> w = float32_weights(p, g, weights, 90);
  const std::vector<int64_t> image{1, kChannels, kSide, kSide};
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  const uint32_t conv = g.tensor("conv", f32, image), norm = g.tensor("norm", f32, image);
  const uint32_t relu = g.tensor("relu", f32, image), next = g.tensor("next", f32, image);
  g.node("conv", p.op("aten::conv2d", "default"),
         Args{{"input", arg::tensor(x)}, {"weight", arg::tensor(w[0])}, {"bias", arg::optional_tensor(static_cast<int32_t>(w[1]))},
              {"stride", arg::integers({1, 1})}, {"padding", arg::integers({1, 1})}},
         {}, {arg::tensor(conv)});
  g.node("norm", p.op("aten::batch_norm", "default"),
         Args{{"input", arg::tensor(conv)}, {"weight", arg::optional_tensor(static_cast<int32_t>(w[3]))},
              {"bias", arg::optional_tensor(static_cast<int32_t>(w[4]))},
              {"running_mean", arg::optional_tensor(static_cast<int32_t>(w[5]))},
              {"running_var", arg::optional_tensor(static_cast<int32_t>(w[6]))}, {"training", arg::boolean(false)},
              {"momentum", arg::real(0.1)}, {"eps", arg::real(1e-5)}, {"cudnn_enabled", arg::boolean(false)}},
         {}, {arg::tensor(norm)});
  g.node("relu", p.op("aten::relu", "default"), Args{{"self", arg::tensor(norm)}}, {}, {arg::tensor(relu)});
  g.node("next", p.op("aten::conv2d", "default"), Args{{"input", arg::tensor(relu)}, {"weight", arg::tensor(w[2])}}, {},
         {arg::tensor(next)});
  g.user_output(arg::tensor(next));
  return p.finish();
}

TEST(ConvolutionFusion, AWrongSizedBiasIsAnErrorOnEveryRun) {
  // The kept call (kernel_state.h) once folded the batch norm over a bias it had not checked,
  // reading past it, and ran from the second run on.
  auto executor = load_program(biased_block_program(kChannels - 1));
  ASSERT_NE(executor, nullptr);
  ASSERT_TRUE(has_argument(node_named(*executor, "conv"), "nrt.batch_norm.running_mean"));
  for (int run = 0; run < 3; ++run) {
    auto outputs = executor->run(NamedInputs{{"x", image_input(ScalarType::FLOAT32)}});
    ASSERT_FALSE(outputs.ok()) << "run " << run;
    EXPECT_NE(outputs.error().to_string().find("bias"), std::string::npos) << outputs.error().to_string();
  }
}

// One channel through a 3x3 convolution, two 1x1 convolutions and a 1x1 head, 256x256 (each
// result 256 KiB): a 1x1 convolution of one channel is depthwise too. `first_is_output`: the 3x3
// result is a graph output, which keeps every node apart.
ProgramWithWeights single_channel_program(bool first_is_output) {
  const auto f32 = ScalarType::FLOAT32;
  ProgramBuilder p("single_channel_test");
  auto g = p.graph("main", true);
  const std::vector<uint32_t> w = float32_weights(
      p, g, {{"a.weight", {1, 1, 3, 3}}, {"b.weight", {1, 1, 1, 1}}, {"c.weight", {1, 1, 1, 1}}, {"d.weight", {1, 1, 1, 1}}},
      95);
  const std::vector<int64_t> image{1, 1, 256, 256};
  const uint32_t x = g.tensor("x", f32, image);
  g.user_input(arg::tensor(x));
  uint32_t last = x;
  const char* names[] = {"a", "b", "c", "d"};
  uint32_t first = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t out = g.tensor(names[i], f32, image);
    g.node(names[i], p.op("aten::conv2d", "default"),
           Args{{"input", arg::tensor(last)}, {"weight", arg::tensor(w[static_cast<size_t>(i)])}, {"bias", arg::optional_tensor(-1)},
                {"stride", arg::integers({1, 1})}, {"padding", arg::integers({i == 0 ? 1 : 0, i == 0 ? 1 : 0})}},
           {}, {arg::tensor(out)});
    if (i == 0) first = out;
    last = out;
  }
  g.user_output(arg::tensor(last));
  if (first_is_output) g.user_output(arg::tensor(first));
  return p.finish();
}

TEST(ConvolutionFusion, AProjectionThatTookADepthwiseStageIsNotTakenOverItself) {
  // b takes a over as its depthwise stage; c must not then take b over as one, dropping a.
  auto fused = load_program(single_channel_program(false));
  auto apart = load_program(single_channel_program(true));
  ASSERT_NE(fused, nullptr);
  ASSERT_NE(apart, nullptr);
  EXPECT_TRUE(has_argument(node_named(*fused, "b"), "nrt.depthwise.weight"));
  EXPECT_FALSE(has_argument(node_named(*fused, "c"), "nrt.depthwise.weight"));
  expect_close_runs(*fused, *apart, {{"x", patterned({1, 1, 256, 256}, 7)}}, 1e-6, 1e-5, "one channel", 1);
}

}  // namespace
}  // namespace nrt::testing
