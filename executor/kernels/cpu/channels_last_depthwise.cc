#include "executor/kernels/cpu/channels_last_depthwise.h"

#include <algorithm>
#include <vector>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/kernels/cpu/onednn_convolution.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool channels_last_depthwise_available() { return cpu_has_avx512f(); }

namespace {

DepthwiseWindow window_of(const OneDnnConvolution& s) {
  return {{s.kernel[1], s.kernel[2]}, {s.stride[1], s.stride[2]}, {s.pad_begin[1], s.pad_begin[2]}, s.in[2], s.out[2], s.channels};
}

}  // namespace

void depthwise_taps(const float* weight, int64_t channels, int64_t kh, int64_t kw, float* taps) {
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t t = 0; t < kh * kw; ++t) taps[t * channels + c] = weight[c * kh * kw + t];
  }
}

void channels_last_depthwise(const DepthwiseWindow& w, int64_t batches, int64_t in_h, int64_t out_h,
                             const float* x, const float* taps, const float* bias, const OutputClamp& clamp, float* y) {
  const int64_t in_row = w.in_w * w.channels, out_row = w.out_w * w.channels;
  // A thread's share: at least 2^15 multiply-adds.
  const int64_t per_row = std::max<int64_t>(1, out_row * w.kernel[0] * w.kernel[1]);
  parallel_for(batches * out_h, std::max<int64_t>(1, (int64_t{1} << 15) / per_row), [&](int64_t begin, int64_t end) {
    std::vector<const float*> rows(static_cast<size_t>(w.kernel[0]));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t image = r / out_h, oy = r % out_h;
      kernel_rows(w, x + image * in_h * in_row, in_h, oy, rows.data());
      avx512::depthwise_row(w, rows.data(), taps, bias, clamp, y + r * out_row);
    }
  });
}

bool depthwise_convolution_takes(const OneDnnConvolution& s) {
  bool plain = s.in[0] == 1 && s.kernel[0] == 1 && s.input_channels_last && s.output_channels_last;
  for (int i = 0; i < 3; ++i) plain = plain && s.dilation[i] == 1;
  if (!plain || s.groups != s.channels || s.out_channels != s.channels || s.channels <= 1 ||
      !channels_last_depthwise_available()) {
    return false;
  }
  // Rows mostly of edges stay on oneDNN: efficientnet's 5x5 over 4x4 and 2x2 images, all edges, took
  // 1.3x oneDNN's time here.
  const auto [lo, hi] = inner_outputs(window_of(s));
  return 2 * (hi - lo) >= s.out[2];
}

OneDnnOutcome depthwise_convolution_forward(const OneDnnConvolution& s, const float* input, const float* weight,
                                            const float* bias, float* output,
                                            const std::shared_ptr<const Storage>& weight_storage) {
  if (!depthwise_convolution_takes(s)) return OneDnnOutcome::kRefused;
  const DepthwiseWindow window = window_of(s);
  const DepthwiseTaps taps(s.channels, s.kernel[1], s.kernel[2], weight, weight_storage);
  channels_last_depthwise(window, s.batches, s.in[1], s.out[1], input, taps.data(), bias, output_clamp_of(s.activation),
                          output);
  return s.activation.kind == ConvolutionActivation::Kind::kSilu ? OneDnnOutcome::kActivationLeftToCaller
                                                                 : OneDnnOutcome::kDone;
}

}  // namespace nrt::exec::cpu
