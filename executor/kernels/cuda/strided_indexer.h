// Element offsets of up to three strided operands (an output and up to three inputs) walked in the
// output's row-major order: what every element-wise CUDA kernel computes per element, and what the
// host tests check against the CPU's iteration. Sizes and strides are in elements; a broadcast
// operand has stride 0 along the broadcast dimensions.
#pragma once

#include <cstdint>

#include "executor/kernels/cuda/host_device.h"

namespace nrt::exec::cuda {

inline constexpr int kMaxDims = 10;
inline constexpr int kMaxOperands = 4;

struct StridedIndexer {
  int dims = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};  // [operand][dim]
};

// The offsets of element `linear` (row-major over `sizes`) for each of `operands` operands.
template <int operands>
NRT_HOST_DEVICE void strided_offsets(const StridedIndexer& indexer, int64_t linear, int64_t (&offsets)[operands]) {
  for (int k = 0; k < operands; ++k) offsets[k] = 0;
  for (int d = indexer.dims - 1; d >= 0; --d) {
    const int64_t size = indexer.sizes[d];
    const int64_t i = linear % size;
    linear /= size;
    for (int k = 0; k < operands; ++k) offsets[k] += i * indexer.strides[k][d];
  }
}

}  // namespace nrt::exec::cuda
