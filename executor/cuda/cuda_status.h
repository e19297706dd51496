// CUDA and cuBLASLt results as nrt errors: every failed call becomes DeviceError (NRT-E1015)
// naming the call and CUDA's own name for the error, never an abort. A missing driver or device
// is DeviceUnavailable (NRT-E1014) instead, naming what is missing.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <string_view>

#include "core/error.h"

namespace nrt::exec::cuda {

// ok for cudaSuccess, else the error naming `call` ("cudaMemcpyAsync: an illegal memory access
// was encountered (cudaErrorIllegalAddress)").
Status cuda_check(cudaError_t result, std::string_view call);
Status cublas_check(cublasStatus_t result, std::string_view call);

// Whether `result` means there is no usable driver or device (not a failure of the call itself).
bool means_no_device(cudaError_t result);

}  // namespace nrt::exec::cuda
