// The index gather kernel (index_launch.h): one thread per output element, any element size.
#include <cuda_runtime.h>

#include "executor/kernels/cuda/device_types.cuh"
#include "executor/kernels/cuda/index_launch.h"

namespace nrt::exec::cuda {
namespace {

template <typename E>
__global__ void index_gather_kernel(IndexGather g) {
  const E* self = static_cast<const E*>(g.self);
  E* out = static_cast<E*>(g.out);
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < g.numel;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    int64_t rest = i, offset = 0;
    int64_t at[kMaxIndexTensors] = {};
    for (int d = g.dims - 1; d >= 0; --d) {
      const int64_t c = rest % g.sizes[d];
      rest /= g.sizes[d];
      offset += c * g.self_strides[d];
      for (int t = 0; t < g.tensors; ++t) at[t] += c * g.index_strides[t][d];
    }
    bool inside = true;
    for (int t = 0; t < g.tensors; ++t) {
      int64_t v = g.index[t][at[t]];
      if (v < 0) v += g.index_limit[t];
      if (v < 0 || v >= g.index_limit[t]) inside = false;
      offset += v * g.index_step[t];
    }
    if (!inside) *g.bad = 1;
    out[i] = inside ? self[offset] : E(0);
  }
}

}  // namespace

cudaError_t launch_index_gather(const IndexGather& g, cudaStream_t stream) {
  if (g.numel == 0) return cudaSuccess;
  const unsigned blocks = blocks_for(g.numel, 256);
  switch (g.element_bytes) {
    case 1: index_gather_kernel<uint8_t><<<blocks, 256, 0, stream>>>(g); break;
    case 2: index_gather_kernel<uint16_t><<<blocks, 256, 0, stream>>>(g); break;
    case 4: index_gather_kernel<uint32_t><<<blocks, 256, 0, stream>>>(g); break;
    case 8: index_gather_kernel<uint64_t><<<blocks, 256, 0, stream>>>(g); break;
    default: return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

}  // namespace nrt::exec::cuda
