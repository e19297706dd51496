// The 1-D convolutions on the pointwise tiles (executor/kernels/cpu/row_convolution.h) against the
// sum in double: strides 1 and 2, padding 0 to 2 on either side, channel counts that are not
// multiples of 8 (the copy without the 8x8 reorder) nor output counts whole blocks of 16, batches,
// input and output channels-first or channels-last, relu; the bits at 1 and 3 threads; and the
// shapes it refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/kernels/cpu/row_convolution.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/storage.h"
#include "tests/kernels/relayout.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

struct Case {
  int64_t batches, channels, out_channels, length, taps, stride, pad_begin, pad_end;
};

OneDnnConvolution shape_of(const Case& c, ConvolutionActivation activation = {}) {
  OneDnnConvolution s{c.batches, c.channels, c.out_channels, 1, {}, {}, {}, {}, {}, {}, {}, activation};
  for (int i = 0; i < 3; ++i) {
    s.in[i] = i == 2 ? c.length : 1;
    s.kernel[i] = i == 2 ? c.taps : 1;
    s.stride[i] = i == 2 ? c.stride : 1;
    s.dilation[i] = 1;
    s.pad_begin[i] = i == 2 ? c.pad_begin : 0;
    s.pad_end[i] = i == 2 ? c.pad_end : 0;
    s.out[i] = (s.in[i] + s.pad_begin[i] + s.pad_end[i] - s.kernel[i]) / s.stride[i] + 1;
  }
  return s;
}

// [N, OC, L_out] from x [N, C, L] and w [OC, C, taps], summed in double with the bias.
std::vector<double> direct(const OneDnnConvolution& s, const std::vector<float>& x, const std::vector<float>& w,
                           const std::vector<float>& bias) {
  const int64_t length = s.in[2], out_length = s.out[2], taps = s.kernel[2];
  std::vector<double> y(static_cast<size_t>(s.batches * s.out_channels * out_length));
  for (int64_t n = 0; n < s.batches; ++n) {
    for (int64_t o = 0; o < s.out_channels; ++o) {
      for (int64_t l = 0; l < out_length; ++l) {
        double sum = bias[static_cast<size_t>(o)];
        for (int64_t c = 0; c < s.channels; ++c) {
          for (int64_t t = 0; t < taps; ++t) {
            const int64_t at = l * s.stride[2] + t - s.pad_begin[2];
            if (at < 0 || at >= length) continue;
            sum += double{x[static_cast<size_t>((n * s.channels + c) * length + at)]} *
                   w[static_cast<size_t>((o * s.channels + c) * taps + t)];
          }
        }
        y[static_cast<size_t>((n * s.out_channels + o) * out_length + l)] = sum;
      }
    }
  }
  return y;
}

// The weights as a loaded program's (a constant storage), which the convolution packs once.
std::shared_ptr<const Storage> constant_storage_of(std::vector<float>& weights) {
  return Storage::borrow_constant(weights.data(), weights.size() * sizeof(float), nullptr);
}

TEST(RowConvolution, MatchesTheDirectSumInEveryLayout) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 F on this CPU";
  const Case cases[] = {
      {1, 80, 128, 128, 3, 1, 1, 1},  // Whisper's first
      {1, 128, 128, 128, 3, 2, 1, 1},  // and second (stride 2)
      {2, 5, 20, 17, 3, 1, 0, 0},      // 5 channels: no 8x8 reorder; 20 outputs: a partial block
      {1, 24, 40, 31, 5, 2, 2, 1},     // 5 taps, unequal padding
      {3, 16, 16, 9, 2, 1, 0, 1},      // an even tap count; three images
      {1, 8, 72, 40, 3, 3, 2, 2},      // stride 3, padding 2
  };
  unsigned seed = 7;
  for (const Case& c : cases) {
    for (const auto kind : {ConvolutionActivation::Kind::kNone, ConvolutionActivation::Kind::kRelu}) {
      const OneDnnConvolution base = shape_of(c, {kind});
      const int64_t out_length = base.out[2];
      const auto x = uniform(static_cast<size_t>(c.batches * c.channels * c.length), seed++);
      auto w = uniform(static_cast<size_t>(c.out_channels * c.channels * c.taps), seed++);
      const auto bias = uniform(static_cast<size_t>(c.out_channels), seed++);
      const auto storage = constant_storage_of(w);
      const std::vector<double> want = direct(base, x, w, bias);
      const std::vector<float> x_last = relayout(x, c.batches, c.channels, c.length, true);
      std::vector<float> first_result;  // the bits every layout must give
      for (const bool input_last : {false, true}) {
        for (const bool output_last : {false, true}) {
          OneDnnConvolution s = base;
          s.input_channels_last = input_last;
          s.output_channels_last = output_last;
          ASSERT_TRUE(row_convolution_takes(s, storage));
          std::vector<float> y(want.size(), std::nanf(""));
          ASSERT_EQ(row_convolution_forward(s, input_last ? x_last.data() : x.data(), w.data(), bias.data(), y.data(),
                                            storage),
                    OneDnnOutcome::kDone);
          if (output_last) y = relayout(y, c.batches, c.out_channels, out_length, false);
          for (size_t i = 0; i < y.size(); ++i) {
            const double expected = kind == ConvolutionActivation::Kind::kRelu ? std::max(want[i], 0.0) : want[i];
            ASSERT_NEAR(y[i], expected, 2e-5) << "length " << c.length << ", element " << i;
          }
          if (first_result.empty()) first_result = y;
          EXPECT_EQ(std::memcmp(y.data(), first_result.data(), y.size() * sizeof(float)), 0)
              << "length " << c.length << ", input last " << input_last << ", output last " << output_last;
        }
      }
    }
  }
}

TEST(RowConvolution, ThreadCountsGiveTheSameBits) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 F on this CPU";
  const Case c{2, 48, 100, 90, 3, 1, 1, 1};
  const OneDnnConvolution s = shape_of(c);
  const auto x = uniform(static_cast<size_t>(c.batches * c.channels * c.length), 31);
  auto w = uniform(static_cast<size_t>(c.out_channels * c.channels * c.taps), 32);
  const auto bias = uniform(static_cast<size_t>(c.out_channels), 33);
  const auto storage = constant_storage_of(w);
  std::vector<float> one(static_cast<size_t>(c.batches * c.out_channels * s.out[2]));
  std::vector<float> three(one.size());
  set_intra_op_threads(1);
  ASSERT_EQ(row_convolution_forward(s, x.data(), w.data(), bias.data(), one.data(), storage), OneDnnOutcome::kDone);
  set_intra_op_threads(3);
  ASSERT_EQ(row_convolution_forward(s, x.data(), w.data(), bias.data(), three.data(), storage), OneDnnOutcome::kDone);
  set_intra_op_threads(0);
  EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)), 0);
}

TEST(RowConvolution, LeavesOtherActivationsToTheCaller) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 F on this CPU";
  const Case c{1, 16, 16, 12, 3, 1, 1, 1};
  const auto x = uniform(16 * 12, 41);
  auto w = uniform(16 * 16 * 3, 42);
  const auto bias = uniform(16, 43);
  const auto storage = constant_storage_of(w);
  std::vector<float> plain(16 * 12), silu(16 * 12);
  ASSERT_EQ(row_convolution_forward(shape_of(c), x.data(), w.data(), bias.data(), plain.data(), storage),
            OneDnnOutcome::kDone);
  ASSERT_EQ(row_convolution_forward(shape_of(c, {ConvolutionActivation::Kind::kSilu}), x.data(), w.data(), bias.data(),
                                    silu.data(), storage),
            OneDnnOutcome::kActivationLeftToCaller);
  EXPECT_EQ(plain, silu);
}

TEST(RowConvolution, RefusesWhatItDoesNotComputeAndWritesNothing) {
  const Case c{1, 16, 16, 12, 3, 1, 1, 1};
  const auto x = uniform(16 * 12 * 4, 51);
  auto w = uniform(16 * 16 * 9, 52);
  const auto storage = constant_storage_of(w);
  std::vector<OneDnnConvolution> refused;
  OneDnnConvolution s = shape_of(c);
  s.groups = 2;
  refused.push_back(s);
  s = shape_of(c);
  s.dilation[2] = 2, s.out[2] = 10;
  refused.push_back(s);
  refused.push_back(shape_of({1, 16, 16, 12, 1, 1, 0, 0}));  // one tap: a pointwise convolution
  s = shape_of(c);
  s.in[1] = 2, s.kernel[1] = 2;  // two spatial dimensions
  refused.push_back(s);
  s = shape_of(c);
  s.out[2] = 13;  // the last window past the padding
  refused.push_back(s);
  for (size_t i = 0; i < refused.size(); ++i) {
    EXPECT_FALSE(row_convolution_takes(refused[i], storage)) << "shape " << i;
    std::vector<float> y(16 * 13, 7.0f);
    EXPECT_EQ(row_convolution_forward(refused[i], x.data(), w.data(), nullptr, y.data(), storage),
              OneDnnOutcome::kRefused);
    EXPECT_EQ(y, std::vector<float>(16 * 13, 7.0f)) << "shape " << i;
  }
  // Weights that are not a loaded program's: oneDNN's, which reorders them on every call.
  EXPECT_FALSE(row_convolution_takes(shape_of(c), nullptr));
}

}  // namespace
}  // namespace nrt::exec::cpu
