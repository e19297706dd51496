#include "executor/cuda/cuda_status.h"

#include <string>

namespace nrt::exec::cuda {

bool means_no_device(cudaError_t result) {
  return result == cudaErrorNoDevice || result == cudaErrorInsufficientDriver ||
         result == cudaErrorInvalidDevice || result == cudaErrorDevicesUnavailable ||
         result == cudaErrorSystemDriverMismatch || result == cudaErrorCompatNotSupportedOnDevice ||
         result == cudaErrorStubLibrary || result == cudaErrorSystemNotReady;
}

Status cuda_check(cudaError_t result, std::string_view call) {
  if (result == cudaSuccess) return {};
  (void)cudaGetLastError();  // a sticky error stays; a plain one is cleared for the next call
  return make_error(means_no_device(result) ? ErrorCode::DeviceUnavailable : ErrorCode::DeviceError,
                    std::string(call) + ": " + cudaGetErrorString(result) + " (" + cudaGetErrorName(result) + ")");
}

Status cublas_check(cublasStatus_t result, std::string_view call) {
  if (result == CUBLAS_STATUS_SUCCESS) return {};
  return make_error(ErrorCode::DeviceError, std::string(call) + ": " + cublasLtGetStatusString(result) + " (" +
                                                cublasLtGetStatusName(result) + ")");
}

}  // namespace nrt::exec::cuda
