// The fused expansion and depthwise convolution (executor/kernels/cpu/expanded_depthwise.h) against
// the two run apart on the same kernels (pointwise_product.h's tiles, silu by
// run_float_activation, channels_last_depthwise.h): the same bits, for 3x3 and 5x5 kernels at
// strides 1 and 2, relu, hardtanh or silu after the expansion, two images, at 1 and 3 threads (a
// thread's first rows expand the rows it shares with the thread before; images of two rows, where the
// next image's rows are the ones the last held).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "executor/kernels/cpu/expanded_depthwise.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/runtime/intra_op_threads.h"
#include "tests/kernels/packed_weights.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

struct Case {
  int64_t batches, height, width, in_channels, channels, kernel, stride;
  OutputClamp expand_clamp;
  bool expand_silu;
};

struct Outputs {
  std::vector<float> fused, apart;
};

Outputs run(const Case& c) {
  const int64_t pad = c.kernel / 2;
  const int64_t out_h = (c.height + 2 * pad - c.kernel) / c.stride + 1, out_w = (c.width + 2 * pad - c.kernel) / c.stride + 1;
  const std::vector<float> x = uniform(static_cast<size_t>(c.batches * c.height * c.width * c.in_channels), 1, 2.0f);
  const std::vector<float> w = uniform(static_cast<size_t>(c.channels * c.in_channels), 2);
  const std::vector<float> expand_bias = uniform(static_cast<size_t>(c.channels), 3);
  const std::vector<float> dw = uniform(static_cast<size_t>(c.channels * c.kernel * c.kernel), 4);
  const std::vector<float> bias = uniform(static_cast<size_t>(c.channels), 5);
  const std::vector<float> p = packed(w, c.channels, c.in_channels);
  std::vector<float> taps(dw.size());
  depthwise_taps(dw.data(), c.channels, c.kernel, c.kernel, taps.data());
  const OutputClamp clamp{true, 0.0f, 6.0f};
  const DepthwiseWindow window{{c.kernel, c.kernel}, {c.stride, c.stride}, {pad, pad}, c.width, out_w, c.channels};
  Outputs o;
  o.fused.assign(static_cast<size_t>(c.batches * out_h * out_w * c.channels), NAN);
  ExpandedDepthwise block;
  block.batches = c.batches;
  block.height = c.height;
  block.width = c.width;
  block.in_channels = c.in_channels;
  block.channels = c.channels;
  block.packed = p.data();
  block.expand_bias = expand_bias.data();
  block.expand_clamp = c.expand_clamp;
  block.expand_silu = c.expand_silu;
  block.window = window;
  block.out_h = out_h;
  block.taps = taps.data();
  block.bias = bias.data();
  block.clamp = clamp;
  expanded_depthwise(block, x.data(), o.fused.data());
  // Apart: the whole expansion, its silu over the whole tensor, then the depthwise convolution.
  const int64_t positions = c.batches * c.height * c.width;
  std::vector<float> expanded(static_cast<size_t>(positions * c.channels));
  pointwise_product(positions, c.in_channels, c.channels, p.data(), x.data(), c.in_channels, expand_bias.data(),
                    c.expand_clamp, expanded.data(), c.channels);
  if (c.expand_silu) {
    run_float_activation(FloatActivation::kSilu, expanded.data(), expanded.data(), static_cast<int64_t>(expanded.size()));
  }
  o.apart.assign(o.fused.size(), NAN);
  channels_last_depthwise(window, c.batches, c.height, out_h, expanded.data(), taps.data(), bias.data(), clamp,
                          o.apart.data());
  return o;
}

constexpr float kInfinity = std::numeric_limits<float>::infinity();

TEST(ExpandedDepthwise, GivesTheBitsOfTheConvolutionsApart) {
  if (!expanded_depthwise_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Case cases[] = {
      {1, 12, 14, 16, 96, 3, 1, {true, 0.0f, 6.0f}, false}, {2, 13, 11, 24, 40, 3, 2, {true, 0.0f, kInfinity}, false},
      {1, 9, 10, 8, 48, 5, 1, {}, true},                    {1, 10, 9, 12, 33, 5, 2, {}, true},
      {1, 1, 1, 4, 16, 3, 1, {}, false},                    {3, 2, 6, 8, 32, 3, 1, {true, 0.0f, kInfinity}, false},
  };
  for (int threads : {1, 3}) {
    set_intra_op_threads(threads);
    for (const Case& c : cases) {
      SCOPED_TRACE("case " + std::to_string(c.height) + "x" + std::to_string(c.width) + " " + std::to_string(c.in_channels) +
                   " -> " + std::to_string(c.channels) + " kernel " + std::to_string(c.kernel) + " stride " +
                   std::to_string(c.stride) + " threads " + std::to_string(threads));
      const Outputs o = run(c);
      EXPECT_EQ(std::memcmp(o.fused.data(), o.apart.data(), o.fused.size() * sizeof(float)), 0);
    }
  }
  set_intra_op_threads(0);
}

}  // namespace
}  // namespace nrt::exec::cpu
