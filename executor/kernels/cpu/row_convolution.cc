#include "executor/kernels/cpu/row_convolution.h"

#include <algorithm>
#include <cstring>

#include "executor/kernels/cpu/channels_last_reorder.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/pointwise_product.h"

namespace nrt::exec::cpu {
namespace {

// One image's [channels][positions] (or, channels-last, [positions][channels]) as rows of
// `channels` floats from `rows` on; the padding rows around them are the caller's.
void copy_rows(const float* image, int64_t channels, int64_t positions, bool channels_last, float* rows) {
  if (channels_last) {
    std::memcpy(rows, image, static_cast<size_t>(channels * positions) * sizeof(float));
  } else if (reorder_channels_takes(channels)) {
    reorder_channels(image, 1, channels, positions, true, rows);
  } else {
    for (int64_t p = 0; p < positions; ++p) {
      for (int64_t c = 0; c < channels; ++c) rows[p * channels + c] = image[c * positions + p];
    }
  }
}

}  // namespace

bool row_convolution_takes(const OneDnnConvolution& s, const std::shared_ptr<const Storage>& weight_storage) {
  if (weight_storage == nullptr || !pointwise_product_available() || s.groups != 1) return false;
  for (int i = 0; i < 2; ++i) {
    if (s.in[i] != 1 || s.kernel[i] != 1 || s.out[i] != 1 || s.pad_begin[i] != 0 || s.pad_end[i] != 0) return false;
  }
  return s.kernel[2] > 1 && s.dilation[2] == 1 && s.stride[2] >= 1 && s.pad_begin[2] >= 0 && s.pad_end[2] >= 0 &&
         s.out[2] >= 1 && (s.out[2] - 1) * s.stride[2] + s.kernel[2] <= s.pad_begin[2] + s.in[2] + s.pad_end[2];
}

OneDnnOutcome row_convolution_forward(const OneDnnConvolution& s, const float* input, const float* weight,
                                      const float* bias, float* output,
                                      const std::shared_ptr<const Storage>& weight_storage) {
  if (!row_convolution_takes(s, weight_storage)) return OneDnnOutcome::kRefused;
  LaidOutWeights packed;
  try {
    packed = tap_major_packed_weights(s.out_channels, s.channels, s.kernel[2], weight, weight_storage);
  } catch (const dnnl::error&) {
    return OneDnnOutcome::kRefused;
  }
  const auto* packed_weights = static_cast<const float*>(packed.memory.get_data_handle());
  const int64_t channels = s.channels, length = s.in[2], out_length = s.out[2];
  const int64_t padded_rows = s.pad_begin[2] + length + s.pad_end[2];
  const int64_t padded_floats = padded_rows * channels, out_floats = out_length * s.out_channels;
  // The padded rows, and where the output is channels-first its rows before the reorder.
  float* rows = scratch_floats(padded_floats + (s.output_channels_last ? 0 : out_floats));
  float* product = s.output_channels_last ? nullptr : rows + padded_floats;
  std::fill(rows, rows + s.pad_begin[2] * channels, 0.0f);
  std::fill(rows + (s.pad_begin[2] + length) * channels, rows + padded_floats, 0.0f);
  for (int64_t n = 0; n < s.batches; ++n) {
    copy_rows(input + n * channels * length, channels, length, s.input_channels_last, rows + s.pad_begin[2] * channels);
    float* y = s.output_channels_last ? output + n * out_floats : product;
    pointwise_product(out_length, s.kernel[2] * channels, s.out_channels, packed_weights, rows, s.stride[2] * channels,
                      bias, output_clamp_of(s.activation), y, s.out_channels);
    if (!s.output_channels_last) {
      if (reorder_channels_takes(s.out_channels)) {
        reorder_channels(product, 1, s.out_channels, out_length, false, output + n * out_floats);
      } else {
        for (int64_t o = 0; o < s.out_channels; ++o) {
          for (int64_t p = 0; p < out_length; ++p) output[n * out_floats + o * out_length + p] = product[p * s.out_channels + o];
        }
      }
    }
  }
  const auto kind = s.activation.kind;
  return kind == ConvolutionActivation::Kind::kRelu || kind == ConvolutionActivation::Kind::kClip ||
                 kind == ConvolutionActivation::Kind::kNone
             ? OneDnnOutcome::kDone
             : OneDnnOutcome::kActivationLeftToCaller;
}

}  // namespace nrt::exec::cpu
