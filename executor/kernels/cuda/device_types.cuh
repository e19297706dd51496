// Device-side element types: the storage type of each ScalarType the CUDA kernels take, its
// compute type (float for the 16-bit floats, int64_t for integers and bool), and the conversions
// between them with torch's casting rules (float to integer truncates; to bool is != 0).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <type_traits>

#include "core/scalar_type.h"

namespace nrt::exec::cuda {

template <typename S>
struct ComputeOf {
  using type = std::conditional_t<std::is_floating_point_v<S>, S, int64_t>;
};
template <>
struct ComputeOf<__half> {
  using type = float;
};
template <>
struct ComputeOf<__nv_bfloat16> {
  using type = float;
};
template <typename S>
using compute_t = typename ComputeOf<S>::type;

template <typename C, typename S>
__device__ __forceinline__ C to_compute(S value) {
  if constexpr (std::is_same_v<S, __half>) {
    return static_cast<C>(__half2float(value));
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    return static_cast<C>(__bfloat162float(value));
  } else {
    return static_cast<C>(value);
  }
}

template <typename S, typename C>
__device__ __forceinline__ S from_compute(C value) {
  if constexpr (std::is_same_v<S, bool>) {
    return value != C(0);
  } else if constexpr (std::is_same_v<S, __half>) {
    return __float2half_rn(static_cast<float>(value));
  } else if constexpr (std::is_same_v<S, __nv_bfloat16>) {
    return __float2bfloat16_rn(static_cast<float>(value));
  } else {
    return static_cast<S>(value);
  }
}

// Calls f(S{}) with the storage type of `dtype`; false when the kernels do not take it.
template <typename F>
bool dispatch_storage(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::FLOAT32: f(float{}); return true;
    case ScalarType::FLOAT64: f(double{}); return true;
    case ScalarType::FLOAT16: f(__half{}); return true;
    case ScalarType::BFLOAT16: f(__nv_bfloat16{}); return true;
    case ScalarType::INT64: f(int64_t{}); return true;
    case ScalarType::INT32: f(int32_t{}); return true;
    case ScalarType::INT16: f(int16_t{}); return true;
    case ScalarType::INT8: f(int8_t{}); return true;
    case ScalarType::UINT8: f(uint8_t{}); return true;
    case ScalarType::BOOL: f(bool{}); return true;
    default: return false;
  }
}

// Calls f(S{}) for the floating storage types only.
template <typename F>
bool dispatch_floating(ScalarType dtype, F&& f) {
  switch (dtype) {
    case ScalarType::FLOAT32: f(float{}); return true;
    case ScalarType::FLOAT64: f(double{}); return true;
    case ScalarType::FLOAT16: f(__half{}); return true;
    case ScalarType::BFLOAT16: f(__nv_bfloat16{}); return true;
    default: return false;
  }
}

// A grid for `n` elements of one thread each, at most 65535 * 8 blocks (the kernels stride).
inline unsigned blocks_for(int64_t n, int threads) {
  const int64_t blocks = (n + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks > 65535 * 8 ? 65535 * 8 : blocks);
}

}  // namespace nrt::exec::cuda
