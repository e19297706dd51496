// The channels-last layout of 4-D tensors: NHWC in memory, sizes still [N, C, H, W]. Convolutions
// write it for the convolutions and pools that read their result, and max pools for the
// convolutions after them (executor/runtime/convolution_epilogue.h); those read it as it is.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// Strides of a dense [N, C, H, W] tensor laid out as [N, H, W, C].
inline std::vector<int64_t> channels_last_strides(const std::vector<int64_t>& sizes) {
  const int64_t c = sizes[1], w = sizes[3], h = sizes[2];
  return {h * w * c, 1, w * c, c};
}

// A 4-D tensor whose elements lie densely in NHWC order (dims of size 1 may have any stride).
inline bool is_channels_last(const Tensor& t) {
  if (t.dim() != 4) return false;
  const std::vector<int64_t> expected = channels_last_strides(t.sizes());
  for (size_t d = 0; d < 4; ++d) {
    if (t.sizes()[d] != 1 && t.strides()[d] != expected[d]) return false;
  }
  return true;
}

}  // namespace nrt::exec::cpu
