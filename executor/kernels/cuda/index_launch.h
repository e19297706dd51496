// The launcher of the index gather kernel (index_kernels.cu): every output element reads one
// element of `self` at an offset made of the output coordinates (through `self_strides`) plus,
// for each index tensor, its value at those coordinates times the indexed dim's stride. It serves
// index.Tensor (advanced indexing), gather and index_select.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "executor/kernels/cuda/strided_indexer.h"

namespace nrt::exec::cuda {

inline constexpr int kMaxIndexTensors = 4;

struct IndexGather {
  int dims = 0;                       // of the output
  int64_t sizes[kMaxDims] = {};       // the output's sizes
  int64_t self_strides[kMaxDims] = {};  // each output coordinate's step in self (0: an index dim)
  int tensors = 0;
  const int64_t* index[kMaxIndexTensors] = {};
  int64_t index_strides[kMaxIndexTensors][kMaxDims] = {};  // each index tensor over the output's dims
  int64_t index_step[kMaxIndexTensors] = {};   // the stride in self of the dim it indexes
  int64_t index_limit[kMaxIndexTensors] = {};  // that dim's size: -limit <= i < limit, negatives wrap
  int64_t numel = 0;
  int64_t element_bytes = 0;  // 1, 2, 4 or 8
  const void* self = nullptr;
  void* out = nullptr;  // contiguous
  int32_t* bad = nullptr;  // device flag set to 1 when an index is out of range (the element reads 0)
};

cudaError_t launch_index_gather(const IndexGather& gather, cudaStream_t stream);

}  // namespace nrt::exec::cuda
