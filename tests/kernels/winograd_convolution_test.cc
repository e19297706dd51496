// The Winograd F(2x2, 3x3) convolution (executor/kernels/cpu/winograd_convolution.h) against the
// direct sum in double: every padding it takes, odd output sizes (tiles past the edge), channel
// counts that are not whole blocks of the product kernel, batches, several chunks of tile rows,
// the bias and each epilogue, on NCHW and on channels-last tensors, with tiles of 2x2 and 4x4
// outputs; its bits at 1 and 3 threads; the AVX-512 products' bits against the AVX2 ones; and the
// shapes it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/kernels/cpu/winograd_convolution.h"
#include "executor/kernels/cpu/winograd_parts.h"
#include "executor/runtime/intra_op_threads.h"
#include "tests/kernels/relayout.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

struct Case {
  int64_t batches, channels, out_channels, height, width;
  int64_t pad_top, pad_left, pad_bottom, pad_right;
};

OneDnnConvolution shape_of(const Case& c, ConvolutionActivation activation = {}) {
  OneDnnConvolution s{c.batches, c.channels, c.out_channels, 1, {}, {}, {}, {}, {}, {}, {}, activation};
  const int64_t in[3] = {1, c.height, c.width};
  const int64_t begin[3] = {0, c.pad_top, c.pad_left}, end[3] = {0, c.pad_bottom, c.pad_right};
  for (int i = 0; i < 3; ++i) {
    s.in[i] = in[i];
    s.kernel[i] = i == 0 ? 1 : 3;
    s.stride[i] = 1;
    s.dilation[i] = 1;
    s.pad_begin[i] = begin[i];
    s.pad_end[i] = end[i];
    s.out[i] = in[i] + begin[i] + end[i] - s.kernel[i] + 1;
  }
  return s;
}

// The convolution with its bias, summed in double.
std::vector<double> direct(const OneDnnConvolution& s, const std::vector<float>& x, const std::vector<float>& w,
                           const float* bias) {
  const int64_t h = s.in[1], wd = s.in[2], oh = s.out[1], ow = s.out[2];
  std::vector<double> y(static_cast<size_t>(s.batches * s.out_channels * oh * ow));
  for (int64_t n = 0; n < s.batches; ++n) {
    for (int64_t k = 0; k < s.out_channels; ++k) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          double sum = bias != nullptr ? bias[k] : 0.0;
          for (int64_t c = 0; c < s.channels; ++c) {
            for (int64_t ky = 0; ky < 3; ++ky) {
              const int64_t iy = oy + ky - s.pad_begin[1];
              if (iy < 0 || iy >= h) continue;
              for (int64_t kx = 0; kx < 3; ++kx) {
                const int64_t ix = ox + kx - s.pad_begin[2];
                if (ix < 0 || ix >= wd) continue;
                sum += double{x[static_cast<size_t>(((n * s.channels + c) * h + iy) * wd + ix)]} *
                       w[static_cast<size_t>(((k * s.channels + c) * 3 + ky) * 3 + kx)];
              }
            }
          }
          y[static_cast<size_t>(((n * s.out_channels + k) * oh + oy) * ow + ox)] = sum;
        }
      }
    }
  }
  return y;
}

size_t output_count(const OneDnnConvolution& s) {
  return static_cast<size_t>(s.batches * s.out_channels * s.out[1] * s.out[2]);
}

TEST(WinogradConvolution, MatchesTheDirectSumOnEveryEdge) {
  const Case cases[] = {
      {1, 24, 24, 8, 8, 1, 1, 1, 1},       // one tile row of 4 tiles, whole blocks of 6
      {2, 25, 29, 9, 11, 1, 1, 1, 1},      // odd outputs both ways: the last tiles half outside
      {1, 24, 26, 10, 13, 0, 0, 0, 0},     // no padding
      {1, 24, 28, 9, 10, 2, 1, 0, 2},      // padding of 0, 1 and 2, unequal sides
      {1, 24, 28, 130, 130, 1, 1, 1, 1},   // several chunks of tile rows, the last one short
  };
  const ConvolutionActivation none, relu{ConvolutionActivation::Kind::kRelu}, clip{ConvolutionActivation::Kind::kClip, -0.1, 0.2};
  unsigned seed = 1;
  for (const Case& c : cases) {
    for (const ConvolutionActivation& activation : {none, relu, clip}) {
      const OneDnnConvolution s = shape_of(c, activation);
      ASSERT_TRUE(winograd_takes(s)) << "case " << seed;
      const auto x = uniform(static_cast<size_t>(c.batches * c.channels * c.height * c.width), seed++);
      const auto w = uniform(static_cast<size_t>(c.out_channels * c.channels * 9), seed++);
      const auto b = uniform(static_cast<size_t>(c.out_channels), seed++);
      const bool with_bias = activation.kind != ConvolutionActivation::Kind::kClip;  // and a null bias
      std::vector<float> y(output_count(s), std::nanf(""));
      ASSERT_EQ(winograd_convolution_forward(s, x.data(), w.data(), with_bias ? b.data() : nullptr, y.data()),
                OneDnnOutcome::kDone);
      const std::vector<double> want = direct(s, x, w, with_bias ? b.data() : nullptr);
      for (size_t i = 0; i < y.size(); ++i) {
        double expected = want[i];
        if (activation.kind == ConvolutionActivation::Kind::kRelu) expected = std::max(expected, 0.0);
        if (activation.kind == ConvolutionActivation::Kind::kClip) expected = std::clamp(expected, -0.1, 0.2);
        // Sums of at most 25 * 9 products of values in [-0.5, 0.5]; a wrong transform is off by 0.01 and more.
        ASSERT_NEAR(y[i], expected, 2e-5) << "case " << seed << ", element " << i;
      }
    }
  }
}

// Channels-last on both sides, or on one (the other reordered, the same bits): the direct sum,
// with tiles of 2x2 outputs (the NCHW passes' bits: one order of additions in both) or of 4x4.
TEST(WinogradConvolution, ChannelsLastMatchesTheDirectSum) {
  struct ChannelsLastCase {
    Case c;
    int tile;
  };
  const ChannelsLastCase cases[] = {
      {{1, 24, 24, 8, 8, 1, 1, 1, 1}, 4},       // one tile of 4x4 outputs a row
      {{2, 24, 40, 9, 11, 1, 1, 1, 1}, 2},      // odd outputs; 40 output channels: a partial panel of 16
      {{1, 24, 32, 10, 13, 0, 0, 0, 0}, 4},     // 8x11 outputs: the last tiles a quarter outside
      {{1, 32, 24, 9, 10, 2, 1, 0, 2}, 2},      // padding of 0, 1 and 2, unequal sides
      {{1, 24, 32, 100, 90, 1, 1, 1, 1}, 4},    // several chunks; tiles not a multiple of 6
      {{1, 16, 16, 14, 14, 1, 1, 1, 1}, 2},     // 4x4 tiles would cover 16x16: 31% more
      {{1, 48, 16, 28, 28, 1, 1, 1, 1}, 4},
  };
  unsigned seed = 101;
  for (const auto& [c, tile] : cases) {
    for (const ConvolutionActivation& activation : {ConvolutionActivation{}, ConvolutionActivation{ConvolutionActivation::Kind::kRelu}}) {
      OneDnnConvolution s = shape_of(c, activation);
      const int64_t plane = c.height * c.width, out_plane = s.out[1] * s.out[2];
      const auto x = uniform(static_cast<size_t>(c.batches * c.channels * plane), seed++);
      const auto w = uniform(static_cast<size_t>(c.out_channels * c.channels * 9), seed++);
      const auto b = uniform(static_cast<size_t>(c.out_channels), seed++);
      s.input_channels_last = s.output_channels_last = true;
      ASSERT_EQ(winograd_tile(s), tile) << "case " << seed;
      const std::vector<float> x_last = relayout(x, c.batches, c.channels, plane, true);
      std::vector<float> y_last(output_count(s), std::nanf(""));
      ASSERT_EQ(winograd_convolution_forward(s, x_last.data(), w.data(), b.data(), y_last.data()), OneDnnOutcome::kDone);
      const std::vector<float> y = relayout(y_last, c.batches, c.out_channels, out_plane, false);
      const std::vector<double> want = direct(s, x, w, b.data());
      // F(4x4, 3x3) rounds more: 3e-5 at most measured over these sums of up to 48 * 9 products.
      const double tolerance = tile == 4 ? 1e-4 : 2e-5;
      for (size_t i = 0; i < y.size(); ++i) {
        const double expected = activation.kind == ConvolutionActivation::Kind::kRelu ? std::max(want[i], 0.0) : want[i];
        ASSERT_NEAR(y[i], expected, tolerance) << "case " << seed << ", element " << i;
      }
      if (tile == 2 && c.channels >= 24 && c.out_channels >= 24) {
        OneDnnConvolution nchw = shape_of(c, activation);
        std::vector<float> y_nchw(output_count(s));
        ASSERT_EQ(winograd_convolution_forward(nchw, x.data(), w.data(), b.data(), y_nchw.data()), OneDnnOutcome::kDone);
        EXPECT_EQ(std::memcmp(y.data(), y_nchw.data(), y.size() * sizeof(float)), 0) << "case " << seed;
      }
      // One side channels-last, the other NCHW.
      s.output_channels_last = false;
      std::vector<float> y_first(output_count(s));
      ASSERT_EQ(winograd_convolution_forward(s, x_last.data(), w.data(), b.data(), y_first.data()), OneDnnOutcome::kDone);
      EXPECT_EQ(std::memcmp(y_first.data(), y.data(), y.size() * sizeof(float)), 0) << "case " << seed;
      s.input_channels_last = false, s.output_channels_last = true;
      std::vector<float> y_second(output_count(s));
      ASSERT_EQ(winograd_convolution_forward(s, x.data(), w.data(), b.data(), y_second.data()), OneDnnOutcome::kDone);
      EXPECT_EQ(y_second, y_last) << "case " << seed;
    }
  }
}

TEST(WinogradConvolution, LeavesSiluToTheCaller) {
  const Case c{1, 24, 26, 12, 12, 1, 1, 1, 1};
  const OneDnnConvolution plain = shape_of(c), silu = shape_of(c, {ConvolutionActivation::Kind::kSilu});
  const auto x = uniform(24 * 144, 41), w = uniform(26 * 24 * 9, 42), b = uniform(26, 43);
  std::vector<float> without(output_count(plain)), with(output_count(plain));
  ASSERT_EQ(winograd_convolution_forward(plain, x.data(), w.data(), b.data(), without.data()), OneDnnOutcome::kDone);
  ASSERT_EQ(winograd_convolution_forward(silu, x.data(), w.data(), b.data(), with.data()),
            OneDnnOutcome::kActivationLeftToCaller);
  EXPECT_EQ(std::memcmp(without.data(), with.data(), without.size() * sizeof(float)), 0);
}

// At 2 and 3 threads, each chunk's passes split over the threads (the first case: 2 chunks of
// tile rows, 2 lanes at 2 threads, 1 at 3) or threads taking whole chunks (the second: 5 chunks of
// 5 tile rows, 2 lanes at 2 threads, 3 at 3): the bits of one thread either way.
TEST(WinogradConvolution, ThreadCountsGiveTheSameBits) {
  const Case cases[] = {{2, 32, 40, 30, 27, 1, 1, 1, 1}, {1, 24, 32, 100, 90, 1, 1, 1, 1}};
  unsigned seed = 51;
  for (const Case& c : cases) {
    const auto x = uniform(static_cast<size_t>(c.batches * c.channels * c.height * c.width), seed++);
    const auto w = uniform(static_cast<size_t>(c.out_channels * c.channels * 9), seed++);
    const auto b = uniform(static_cast<size_t>(c.out_channels), seed++);
    for (const bool channels_last : {false, true}) {
      OneDnnConvolution s = shape_of(c, {ConvolutionActivation::Kind::kRelu});
      s.input_channels_last = s.output_channels_last = channels_last;
      std::vector<float> one(output_count(s));
      set_intra_op_threads(1);
      ASSERT_EQ(winograd_convolution_forward(s, x.data(), w.data(), b.data(), one.data()), OneDnnOutcome::kDone);
      for (const int threads : {2, 3}) {
        std::vector<float> split(output_count(s), std::nanf(""));
        set_intra_op_threads(threads);
        ASSERT_EQ(winograd_convolution_forward(s, x.data(), w.data(), b.data(), split.data()), OneDnnOutcome::kDone);
        EXPECT_EQ(std::memcmp(one.data(), split.data(), one.size() * sizeof(float)), 0)
            << c.height << "x" << c.width << ", channels-last " << channels_last << ", " << threads << " threads";
      }
      set_intra_op_threads(0);
    }
  }
}

// The channels-last products on AVX-512 (up to four panels of 16 output channels an item) give the
// AVX2 kernel's bits (one panel an item): 1, 2, 3, 5 and 7 panels, so fours, pairs and a lone last
// panel, over several blocks of 6 tiles and points.
TEST(WinogradConvolution, Avx512ProductsGiveTheAvx2ProductsBits) {
  if (!cpu_has_avx512f()) GTEST_SKIP() << "no AVX-512 F on this CPU";
  for (const int64_t out_channels : {16, 32, 48, 80, 112}) {
    winograd::Geometry g{};
    g.channels = 40;
    g.out_channels = out_channels;
    const int64_t padded = 18, points = 16, panels = winograd::k_panels(g);
    const int64_t v_count = points * winograd::channels_last_v_xi_stride(g, padded);
    const int64_t m_count = points * winograd::channels_last_m_xi_stride(g, padded);
    const auto u = uniform(static_cast<size_t>(points * panels * g.channels * winograd::kTileLanes), 71);
    const auto v = uniform(static_cast<size_t>(v_count), 72);
    std::vector<float> avx2(static_cast<size_t>(m_count), 3.0f), avx512(static_cast<size_t>(m_count), 3.0f);
    winograd::multiply_channels_last(g, u.data(), v.data(), padded, 0, points * panels, avx2.data());
    winograd::multiply_channels_last_avx512(g, u.data(), v.data(), padded, 0, points * winograd::k_panel_groups(g),
                                            avx512.data());
    EXPECT_EQ(std::memcmp(avx2.data(), avx512.data(), avx2.size() * sizeof(float)), 0) << out_channels << " outputs";
    EXPECT_NE(avx2, std::vector<float>(avx2.size(), 3.0f));
  }
}

// The NCHW products on AVX-512 (up to four blocks of 6 output channels by 16 tiles) give the AVX2
// kernel's bits: 1, 2, 3, 5 and 7 blocks, so fours, pairs and a lone last block, over two panels of
// tiles.
TEST(WinogradConvolution, Avx512NchwProductsGiveTheAvx2ProductsBits) {
  if (!cpu_has_avx512f()) GTEST_SKIP() << "no AVX-512 F on this CPU";
  for (const int64_t out_channels : {6, 12, 17, 30, 42}) {
    winograd::Geometry g{};
    g.channels = 40;
    g.out_channels = out_channels;
    g.k_blocks = (out_channels + winograd::kChannelBlock - 1) / winograd::kChannelBlock;
    const int64_t stride = 2 * winograd::kTileLanes, items = 16 * (stride / winograd::kTileLanes);
    const int64_t m_count = 16 * winograd::m_xi_stride(g, stride);
    const auto u = uniform(static_cast<size_t>(16 * g.k_blocks * g.channels * winograd::kChannelBlock), 73);
    const auto v = uniform(static_cast<size_t>(16 * winograd::v_xi_stride(g, stride)), 74);
    std::vector<float> avx2(static_cast<size_t>(m_count), 3.0f), avx512(static_cast<size_t>(m_count), 3.0f);
    winograd::multiply(g, u.data(), v.data(), stride, 0, items, avx2.data());
    winograd::multiply_avx512(g, u.data(), v.data(), stride, 0, items, avx512.data());
    EXPECT_EQ(std::memcmp(avx2.data(), avx512.data(), avx2.size() * sizeof(float)), 0) << out_channels << " outputs";
    EXPECT_NE(avx2, std::vector<float>(avx2.size(), 3.0f));
  }
}

TEST(WinogradConvolution, RefusesWhatItDoesNotComputeAndWritesNothing) {
  const Case base{1, 24, 24, 12, 12, 1, 1, 1, 1};
  ASSERT_TRUE(winograd_takes(shape_of(base)));
  OneDnnConvolution sixteen = shape_of({1, 16, 16, 12, 12, 1, 1, 1, 1});
  sixteen.input_channels_last = sixteen.output_channels_last = true;
  ASSERT_TRUE(winograd_takes(sixteen)) << "16 channels, channels-last";
  EXPECT_EQ(winograd_tile(shape_of(base)), 2) << "NCHW: 2x2 tiles only";
  std::vector<OneDnnConvolution> refused;
  OneDnnConvolution s = shape_of(base);
  s.stride[1] = 2, s.out[1] = 6;
  refused.push_back(s);
  s = shape_of(base);
  s.dilation[2] = 2, s.out[2] = 10;
  refused.push_back(s);
  s = shape_of(base);
  s.groups = 2;
  refused.push_back(s);
  s = shape_of(base);
  s.kernel[1] = s.kernel[2] = 5, s.pad_begin[1] = s.pad_begin[2] = s.pad_end[1] = s.pad_end[2] = 2;
  refused.push_back(s);
  s = shape_of(base);
  s.pad_begin[2] = 3, s.out[2] = 14;
  refused.push_back(s);
  refused.push_back(shape_of({1, 16, 24, 12, 12, 1, 1, 1, 1}));  // NCHW, 16 channels
  s = shape_of({1, 8, 16, 12, 12, 1, 1, 1, 1});
  s.input_channels_last = s.output_channels_last = true;  // channels-last, 8 channels
  refused.push_back(s);
  refused.push_back(shape_of({1, 24, 24, 7, 7, 1, 1, 1, 1}));   // too few outputs a side
  s = shape_of({1, 20, 16, 12, 12, 1, 1, 1, 1});
  s.input_channels_last = true;  // channels-last input, 20 channels
  refused.push_back(s);
  s = shape_of({1, 16, 20, 12, 12, 1, 1, 1, 1});
  s.output_channels_last = true;  // channels-last output, 20 output channels
  refused.push_back(s);
  s = shape_of(base);
  s.in[0] = s.out[0] = 2;  // three spatial dimensions
  refused.push_back(s);
  const auto x = uniform(24 * 144 * 2, 61), w = uniform(24 * 24 * 25, 62);
  for (size_t i = 0; i < refused.size(); ++i) {
    EXPECT_FALSE(winograd_takes(refused[i])) << "shape " << i;
    EXPECT_EQ(winograd_tile(refused[i]), 0) << "shape " << i;
    std::vector<float> y(24 * 144 * 2, 7.0f);
    EXPECT_EQ(winograd_convolution_forward(refused[i], x.data(), w.data(), nullptr, y.data()), OneDnnOutcome::kRefused);
    EXPECT_EQ(y, std::vector<float>(24 * 144 * 2, 7.0f)) << "shape " << i;
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
