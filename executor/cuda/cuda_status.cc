#include "executor/cuda/cuda_status.h"

#include <string>

#include "executor/cuda/cublaslt_library.h"

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
  // A status comes from a call into the library, so it is open.
  const auto lt = cublaslt();
  if (!lt) return make_error(ErrorCode::DeviceError, std::string(call) + ": cuBLASLt status " + std::to_string(result));
  return make_error(ErrorCode::DeviceError, std::string(call) + ": " + (*lt)->get_status_string(result) + " (" +
                                                (*lt)->get_status_name(result) + ")");
}

}  // namespace nrt::exec::cuda
