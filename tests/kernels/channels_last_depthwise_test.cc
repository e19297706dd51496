// The channels-last depthwise convolution (executor/kernels/cpu/channels_last_depthwise.h) against
// the sum in double: 3x3 and 5x5 kernels (the register-tiled rows) and 2x2, 3x5 and 7x7 (the
// general ones), strides 1, 2 and 3 and of two digits (11, 21: past the tiled rows' one-digit
// keys), channel counts with tails of a 16-channel block (19, 40, 70), rows narrower than the
// kernel (every output at an edge), with and without bias, relu and hardtanh clamps (a NaN input
// stays NaN in the outputs that read it). Bits: the same at 1 and 3 threads,
// and the same as the convolution of the input padded with zeros and no padding of its own (an
// edge output sums its taps in an interior output's order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "executor/kernels/cpu/channels_last_depthwise.h"
#include "executor/runtime/intra_op_threads.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

struct Case {
  int64_t batches, height, width, channels, kh, kw, stride, pad;
  bool bias;
  OutputClamp clamp;
};

int64_t out_extent(int64_t in, int64_t kernel, int64_t stride, int64_t pad) { return (in + 2 * pad - kernel) / stride + 1; }

struct Convolved {
  std::vector<float> y;
  int64_t out_h, out_w;
};

// The convolution of x ([N][H][W][C]) with weight [C][kh][kw] through channels_last_depthwise.
Convolved convolve(const Case& c, const std::vector<float>& x, const std::vector<float>& weight, const std::vector<float>& bias) {
  const int64_t out_h = out_extent(c.height, c.kh, c.stride, c.pad), out_w = out_extent(c.width, c.kw, c.stride, c.pad);
  std::vector<float> taps(weight.size());
  depthwise_taps(weight.data(), c.channels, c.kh, c.kw, taps.data());
  const DepthwiseWindow window{{c.kh, c.kw}, {c.stride, c.stride}, {c.pad, c.pad}, c.width, out_w, c.channels};
  std::vector<float> y(static_cast<size_t>(c.batches * out_h * out_w * c.channels), NAN);
  channels_last_depthwise(window, c.batches, c.height, out_h, x.data(), taps.data(), c.bias ? bias.data() : nullptr,
                          c.clamp, y.data());
  return {y, out_h, out_w};
}

// Checks every output against the sum in double, clamped, within the float sum's bound.
void expect_sums(const Case& c, const Convolved& run, const std::vector<float>& x, const std::vector<float>& weight,
                 const std::vector<float>& bias) {
  for (int64_t n = 0; n < c.batches; ++n) {
    for (int64_t oy = 0; oy < run.out_h; ++oy) {
      for (int64_t ox = 0; ox < run.out_w; ++ox) {
        for (int64_t ch = 0; ch < c.channels; ++ch) {
          double sum = c.bias ? bias[static_cast<size_t>(ch)] : 0.0, magnitude = std::fabs(sum);
          for (int64_t ky = 0; ky < c.kh; ++ky) {
            for (int64_t kx = 0; kx < c.kw; ++kx) {
              const int64_t iy = oy * c.stride - c.pad + ky, ix = ox * c.stride - c.pad + kx;
              if (iy < 0 || iy >= c.height || ix < 0 || ix >= c.width) continue;
              const double term = static_cast<double>(weight[static_cast<size_t>((ch * c.kh + ky) * c.kw + kx)]) *
                                  x[static_cast<size_t>(((n * c.height + iy) * c.width + ix) * c.channels + ch)];
              sum += term;
              magnitude += std::fabs(term);
            }
          }
          if (c.clamp.on) sum = std::min<double>(c.clamp.hi, std::max<double>(c.clamp.lo, sum));
          const float got = run.y[static_cast<size_t>(((n * run.out_h + oy) * run.out_w + ox) * c.channels + ch)];
          ASSERT_NEAR(got, sum, 1e-6 * static_cast<double>(c.kh * c.kw + 1) * magnitude + 1e-30)
              << "image " << n << " output (" << oy << ", " << ox << ") channel " << ch;
        }
      }
    }
  }
}

std::string describe(const Case& c) {
  return std::to_string(c.batches) + "x" + std::to_string(c.height) + "x" + std::to_string(c.width) + "x" +
         std::to_string(c.channels) + " kernel " + std::to_string(c.kh) + "x" + std::to_string(c.kw) + " stride " +
         std::to_string(c.stride) + " pad " + std::to_string(c.pad);
}

constexpr float kInfinity = std::numeric_limits<float>::infinity();
const OutputClamp kNone{}, kRelu{true, 0.0f, kInfinity}, kHardtanh{true, 0.0f, 6.0f};

const Case kCases[] = {
    {1, 9, 30, 16, 3, 3, 1, 1, true, kHardtanh},  {2, 8, 21, 19, 3, 3, 2, 1, true, kRelu},
    {1, 7, 7, 70, 3, 3, 1, 1, false, kNone},      {1, 12, 13, 40, 5, 5, 1, 2, true, kNone},
    {1, 11, 17, 33, 5, 5, 2, 2, true, kHardtanh}, {1, 2, 2, 48, 5, 5, 1, 2, true, kNone},
    {1, 1, 1, 20, 3, 3, 1, 1, true, kRelu},       {1, 6, 9, 24, 3, 5, 1, 1, true, kNone},
    {1, 10, 10, 17, 7, 7, 3, 3, false, kRelu},    {1, 5, 40, 96, 3, 3, 1, 0, true, kNone},
    // Strides of two digits: a 2x2 kernel at stride 11 and a 3x3 at stride 21 once took the 3x3
    // stride-1 and 5x5 stride-1 rows' taps (a key of 10 * side + stride).
    {1, 30, 40, 16, 2, 2, 11, 0, true, kNone},    {1, 50, 50, 19, 3, 3, 21, 1, true, kRelu},
};

TEST(ChannelsLastDepthwise, MatchesTheSumInDouble) {
  if (!channels_last_depthwise_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const Case& c : kCases) {
    SCOPED_TRACE(describe(c));
    const std::vector<float> x = uniform(static_cast<size_t>(c.batches * c.height * c.width * c.channels), 1, 2.0f);
    const std::vector<float> w = uniform(static_cast<size_t>(c.channels * c.kh * c.kw), 2);
    const std::vector<float> b = uniform(static_cast<size_t>(c.channels), 3);
    expect_sums(c, convolve(c, x, w, b), x, w, b);
  }
}

TEST(ChannelsLastDepthwise, EdgesSumInTheInteriorsOrder) {
  if (!channels_last_depthwise_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const Case& c : {kCases[0], kCases[1], kCases[3], kCases[4], kCases[7]}) {
    SCOPED_TRACE(describe(c));
    const std::vector<float> x = uniform(static_cast<size_t>(c.batches * c.height * c.width * c.channels), 4, 2.0f);
    const std::vector<float> w = uniform(static_cast<size_t>(c.channels * c.kh * c.kw), 5);
    const std::vector<float> b = uniform(static_cast<size_t>(c.channels), 6);
    // The same input inside a border of zeros, convolved without padding: every output interior.
    Case padded = c;
    padded.height += 2 * c.pad;
    padded.width += 2 * c.pad;
    padded.pad = 0;
    std::vector<float> bordered(static_cast<size_t>(c.batches * padded.height * padded.width * c.channels), 0.0f);
    for (int64_t n = 0; n < c.batches; ++n) {
      for (int64_t y = 0; y < c.height; ++y) {
        std::copy_n(x.begin() + ((n * c.height + y) * c.width) * c.channels, c.width * c.channels,
                    bordered.begin() + ((n * padded.height + y + c.pad) * padded.width + c.pad) * c.channels);
      }
    }
    const Convolved edged = convolve(c, x, w, b), interior = convolve(padded, bordered, w, b);
    ASSERT_EQ(edged.y.size(), interior.y.size());
    EXPECT_EQ(std::memcmp(edged.y.data(), interior.y.data(), edged.y.size() * sizeof(float)), 0);
  }
}

TEST(ChannelsLastDepthwise, ClampKeepsNaN) {
  if (!channels_last_depthwise_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Case c{1, 6, 6, 20, 3, 3, 1, 1, true, kHardtanh};
  std::vector<float> x = uniform(static_cast<size_t>(c.height * c.width * c.channels), 7, 2.0f);
  x[static_cast<size_t>((2 * c.width + 3) * c.channels + 5)] = NAN;  // row 2, column 3, channel 5
  const std::vector<float> w = uniform(static_cast<size_t>(c.channels * 9), 8), b = uniform(static_cast<size_t>(c.channels), 9);
  for (const OutputClamp& clamp : {kRelu, kHardtanh}) {
    Case clamped = c;
    clamped.clamp = clamp;
    const Convolved run = convolve(clamped, x, w, b);
    for (int64_t oy = 0; oy < run.out_h; ++oy) {
      for (int64_t ox = 0; ox < run.out_w; ++ox) {
        for (int64_t ch = 0; ch < c.channels; ++ch) {
          const float v = run.y[static_cast<size_t>((oy * run.out_w + ox) * c.channels + ch)];
          const bool reads_nan = ch == 5 && std::abs(oy - 2) <= 1 && std::abs(ox - 3) <= 1;
          if (reads_nan) {
            EXPECT_TRUE(std::isnan(v)) << "output (" << oy << ", " << ox << ")";
          } else {
            EXPECT_TRUE(v >= clamp.lo && v <= clamp.hi) << "output (" << oy << ", " << ox << ") channel " << ch << ": " << v;
          }
        }
      }
    }
  }
}

TEST(ChannelsLastDepthwise, GivesOneThreadsBitsAtThreeThreads) {
  if (!channels_last_depthwise_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const Case c{2, 40, 40, 48, 3, 3, 1, 1, true, kRelu};
  const std::vector<float> x = uniform(static_cast<size_t>(c.batches * c.height * c.width * c.channels), 10, 2.0f);
  const std::vector<float> w = uniform(static_cast<size_t>(c.channels * 9), 11), b = uniform(static_cast<size_t>(c.channels), 12);
  set_intra_op_threads(1);
  const Convolved one = convolve(c, x, w, b);
  set_intra_op_threads(3);
  const Convolved three = convolve(c, x, w, b);
  set_intra_op_threads(0);
  EXPECT_EQ(std::memcmp(one.y.data(), three.y.data(), one.y.size() * sizeof(float)), 0);
}

}  // namespace
}  // namespace nrt::exec::cpu
