// 1-D convolutions (conv1d: Whisper's two over the mel frames) on pointwise_product.h's tiles.
// On a channels-last copy of the input with its padding as zero rows, output position l reads the
// taps * C floats from row l * stride on, one stretch of memory: the convolution is one pointwise
// product of taps * C inputs over rows that overlap, with each output's weights packed tap-major
// (onednn_kept_weights.h's tap_major_packed_weights). The copy is also the reorder a
// channels-first input needed for oneDNN, which read it channels-last too. Each output sums its
// taps and channels in order from the bias, so its bits do not depend on the thread count.
#pragma once

#include <memory>

#include "executor/kernels/cpu/onednn_convolution.h"

namespace nrt::exec::cpu {

// Whether row_convolution_forward takes `shape`: one spatial dimension (depth and height 1),
// groups 1, dilation 1, more than one tap, a loaded program's weights (`weight_storage`), on a CPU
// where pointwise_product_available.
bool row_convolution_takes(const OneDnnConvolution& shape, const std::shared_ptr<const Storage>& weight_storage);

// Refused, having written nothing, where row_convolution_takes does not hold. relu and hardtanh
// are applied; other activations are left to the caller. Input and output in either layout
// (channels-last flags).
OneDnnOutcome row_convolution_forward(const OneDnnConvolution& shape, const float* input, const float* weight,
                                      const float* bias, float* output,
                                      const std::shared_ptr<const Storage>& weight_storage);

}  // namespace nrt::exec::cpu
