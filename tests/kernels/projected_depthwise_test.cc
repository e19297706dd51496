// The fused depthwise convolution and projection (executor/kernels/cpu/projected_depthwise.h)
// against the two run apart on the same kernels (channels_last_depthwise.h, silu by
// run_float_activation, pointwise_product.h's tiles): the same bits, for 3x3 and 5x5 kernels at
// strides 1 and 2, relu, hardtanh or silu after the depthwise convolution, a clamp after the
// projection or none, rows wide enough for a band of one row and narrow enough for bands of
// several (the last one short), two images, at 1 and 3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/kernels/cpu/projected_depthwise.h"
#include "executor/runtime/intra_op_threads.h"
#include "tests/kernels/packed_weights.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

struct Case {
  int64_t batches, height, width, channels, out_channels, kernel, stride;
  OutputClamp clamp;
  bool silu;
  OutputClamp project_clamp;
  bool biases = true;
};

struct Outputs {
  std::vector<float> fused, apart;
};

Outputs run(const Case& c) {
  const int64_t pad = c.kernel / 2;
  const int64_t out_h = (c.height + 2 * pad - c.kernel) / c.stride + 1, out_w = (c.width + 2 * pad - c.kernel) / c.stride + 1;
  const std::vector<float> x = uniform(static_cast<size_t>(c.batches * c.height * c.width * c.channels), 1, 2.0f);
  const std::vector<float> dw = uniform(static_cast<size_t>(c.channels * c.kernel * c.kernel), 2);
  const std::vector<float> bias = uniform(static_cast<size_t>(c.channels), 3);
  const std::vector<float> w = uniform(static_cast<size_t>(c.out_channels * c.channels), 4);
  const std::vector<float> project_bias = uniform(static_cast<size_t>(c.out_channels), 5);
  const std::vector<float> p = packed(w, c.out_channels, c.channels);
  std::vector<float> taps(dw.size());
  depthwise_taps(dw.data(), c.channels, c.kernel, c.kernel, taps.data());
  const DepthwiseWindow window{{c.kernel, c.kernel}, {c.stride, c.stride}, {pad, pad}, c.width, out_w, c.channels};
  const int64_t positions = c.batches * out_h * out_w;
  Outputs o;
  o.fused.assign(static_cast<size_t>(positions * c.out_channels), NAN);
  ProjectedDepthwise block;
  block.batches = c.batches;
  block.height = c.height;
  block.window = window;
  block.out_h = out_h;
  block.taps = taps.data();
  block.bias = c.biases ? bias.data() : nullptr;
  block.clamp = c.clamp;
  block.silu = c.silu;
  block.out_channels = c.out_channels;
  block.packed = p.data();
  block.project_bias = c.biases ? project_bias.data() : nullptr;
  block.project_clamp = c.project_clamp;
  projected_depthwise(block, x.data(), o.fused.data());
  // Apart: the whole depthwise convolution, its silu over the whole tensor, then the projection.
  std::vector<float> convolved(static_cast<size_t>(positions * c.channels), NAN);
  channels_last_depthwise(window, c.batches, c.height, out_h, x.data(), taps.data(), c.biases ? bias.data() : nullptr,
                          c.clamp, convolved.data());
  if (c.silu) {
    run_float_activation(FloatActivation::kSilu, convolved.data(), convolved.data(), static_cast<int64_t>(convolved.size()));
  }
  o.apart.assign(o.fused.size(), NAN);
  pointwise_product(positions, c.channels, c.out_channels, p.data(), convolved.data(), c.channels,
                    c.biases ? project_bias.data() : nullptr, c.project_clamp, o.apart.data(), c.out_channels);
  return o;
}

constexpr float kInfinity = std::numeric_limits<float>::infinity();
const OutputClamp kNone{}, kRelu{true, 0.0f, kInfinity}, kRelu6{true, 0.0f, 6.0f};

TEST(ProjectedDepthwise, GivesTheBitsOfTheConvolutionsApart) {
  if (!projected_depthwise_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  // Widths 56 and 50: bands of one row; 14, 11 and 9: bands of 4, 5 and 6 rows, the last short.
  const Case cases[] = {
      {1, 8, 56, 32, 16, 3, 1, kRelu6, false, kNone},         {2, 13, 14, 48, 24, 3, 1, kRelu, false, kRelu6},
      {1, 21, 22, 40, 33, 3, 2, kRelu6, false, kNone},        {1, 9, 11, 24, 40, 5, 1, kNone, true, kNone},
      {2, 17, 18, 16, 8, 5, 2, kNone, true, kRelu, false},   {1, 3, 100, 64, 96, 3, 2, kRelu6, false, kNone, false},
      {1, 1, 1, 16, 16, 3, 1, kRelu, false, kNone},
  };
  for (int threads : {1, 3}) {
    set_intra_op_threads(threads);
    for (const Case& c : cases) {
      SCOPED_TRACE("case " + std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" + std::to_string(c.width) +
                   "x" + std::to_string(c.channels) + " -> " + std::to_string(c.out_channels) + " kernel " +
                   std::to_string(c.kernel) + " stride " + std::to_string(c.stride) + " threads " + std::to_string(threads));
      const Outputs o = run(c);
      for (float v : o.fused) ASSERT_FALSE(std::isnan(v)) << "an output the fused pass left unwritten";
      EXPECT_EQ(std::memcmp(o.fused.data(), o.apart.data(), o.fused.size() * sizeof(float)), 0);
    }
  }
  set_intra_op_threads(0);
}

}  // namespace
}  // namespace nrt::exec::cpu
