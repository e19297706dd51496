#include "executor/kernels/cpu/row_convolution.h"

#include <algorithm>
#include <cstring>

#include "executor/kernels/cpu/batched_transpose.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/pointwise_product.h"

namespace nrt::exec::cpu {
namespace {

// A [rows][columns] matrix of floats as its [columns][rows] transpose: batched_transpose.h's 8x8
// register transposes where either side is whole blocks of 8, else a float at a time.
void transpose(const float* from, int64_t rows, int64_t columns, float* to) {
  if (transposes_floats(rows, columns)) {
    transpose_floats(BatchedTranspose{1, rows, columns}, from, to);
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < columns; ++c) to[c * rows + r] = from[r * columns + c];
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
    const float* image = input + n * channels * length;
    float* image_rows = rows + s.pad_begin[2] * channels;
    if (s.input_channels_last) {
      std::memcpy(image_rows, image, static_cast<size_t>(channels * length) * sizeof(float));
    } else {
      transpose(image, channels, length, image_rows);
    }
    float* y = s.output_channels_last ? output + n * out_floats : product;
    pointwise_product(out_length, s.kernel[2] * channels, s.out_channels, packed_weights, rows, s.stride[2] * channels,
                      bias, output_clamp_of(s.activation), y, s.out_channels);
    if (!s.output_channels_last) transpose(product, out_length, s.out_channels, output + n * out_floats);
  }
  const auto kind = s.activation.kind;
  return kind == ConvolutionActivation::Kind::kRelu || kind == ConvolutionActivation::Kind::kClip ||
                 kind == ConvolutionActivation::Kind::kNone
             ? OneDnnOutcome::kDone
             : OneDnnOutcome::kActivationLeftToCaller;
}

}  // namespace nrt::exec::cpu
