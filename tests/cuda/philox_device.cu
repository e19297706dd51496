#include <cuda_runtime.h>

#include "executor/random/philox.h"
#include "tests/cuda/philox_device.h"

namespace nrt::testing {
namespace {

__global__ void philox_blocks_kernel(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const random::PhiloxWords block =
      random::philox4x32_10(random::philox_counter(first_counter + static_cast<uint64_t>(i)), random::philox_key(key));
  for (int j = 0; j < 4; ++j) words[4 * i + j] = block.w[j];
}

}  // namespace

std::string philox_blocks_on_device(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words) {
  uint32_t* device = nullptr;
  const size_t bytes = static_cast<size_t>(count) * 4 * sizeof(uint32_t);
  cudaError_t status = cudaMalloc(&device, bytes);
  if (status == cudaSuccess) {
    const int threads = 256;
    philox_blocks_kernel<<<static_cast<unsigned>((count + threads - 1) / threads), threads>>>(key, first_counter, count,
                                                                                             device);
    status = cudaGetLastError();
  }
  if (status == cudaSuccess) status = cudaMemcpy(words, device, bytes, cudaMemcpyDeviceToHost);
  if (device != nullptr) cudaFree(device);
  return status == cudaSuccess ? std::string() : std::string(cudaGetErrorString(status));
}

}  // namespace nrt::testing
