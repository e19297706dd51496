// What CUDA kernels receive as KernelContext::device_context(): the device's stream and library
// handles. One per device index, made when the device is first used and kept for the process
// (its stream orders every kernel, allocation and copy of the runs on that device).
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstddef>

#include "core/error.h"
#include "executor/cuda/cublaslt_library.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec::cuda {

struct CudaContext {
  int device = 0;
  cudaStream_t stream = nullptr;
  const CublasLt* lt = nullptr;  // cuBLASLt's entry points (cublaslt_library.h)
  cublasLtHandle_t blas = nullptr;
  void* blas_workspace = nullptr;  // cuBLASLt's workspace on the device
  size_t blas_workspace_bytes = 0;
  int multiprocessors = 0;
};

// The context of CUDA device `index`, made on first use; DeviceUnavailable when there is no
// driver, no such device, or it cannot be initialised.
Result<CudaContext*> cuda_context(int index);

// The context a CUDA kernel runs with (KernelContext::device_context()).
inline CudaContext& context_of(const KernelContext& ctx) { return *static_cast<CudaContext*>(ctx.device_context()); }

}  // namespace nrt::exec::cuda
