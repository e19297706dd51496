#include "executor/comm/nan_check.h"

#include <cmath>

#include "executor/runtime/tensor_copy.h"

namespace nrt::exec {
namespace {

// NaN bit patterns: exponent all ones and a non-zero mantissa.
bool half_is_nan(uint16_t bits) { return (bits & 0x7c00u) == 0x7c00u && (bits & 0x03ffu) != 0; }
bool bfloat16_is_nan(uint16_t bits) { return (bits & 0x7f80u) == 0x7f80u && (bits & 0x007fu) != 0; }

template <typename T, typename IsNan>
std::optional<int64_t> scan(const void* data, int64_t count, int per_element, IsNan is_nan) {
  const T* values = static_cast<const T*>(data);
  for (int64_t i = 0; i < count * per_element; ++i) {
    if (is_nan(values[i])) return i / per_element;
  }
  return std::nullopt;
}

}  // namespace

std::optional<int64_t> first_nan_index(const Tensor& tensor) {
  if (!tensor.defined() || tensor.numel() == 0) return std::nullopt;
  const ScalarType dtype = tensor.dtype();
  const bool floating = dtype == ScalarType::FLOAT16 || dtype == ScalarType::BFLOAT16 ||
                        dtype == ScalarType::FLOAT32 || dtype == ScalarType::FLOAT64 ||
                        dtype == ScalarType::COMPLEX32 || dtype == ScalarType::COMPLEX64 ||
                        dtype == ScalarType::COMPLEX128;
  if (!floating) return std::nullopt;
  // Send buffers are contiguous in practice; a strided one is read through a copy.
  const Tensor dense = tensor.is_contiguous() ? tensor : contiguous_copy(tensor);
  const void* data = dense.raw_data();
  const int64_t n = dense.numel();
  auto is_nan_float = [](auto v) { return std::isnan(v); };
  switch (dtype) {
    case ScalarType::FLOAT16: return scan<uint16_t>(data, n, 1, half_is_nan);
    case ScalarType::COMPLEX32: return scan<uint16_t>(data, n, 2, half_is_nan);
    case ScalarType::BFLOAT16: return scan<uint16_t>(data, n, 1, bfloat16_is_nan);
    case ScalarType::FLOAT32: return scan<float>(data, n, 1, is_nan_float);
    case ScalarType::COMPLEX64: return scan<float>(data, n, 2, is_nan_float);
    case ScalarType::FLOAT64: return scan<double>(data, n, 1, is_nan_float);
    case ScalarType::COMPLEX128: return scan<double>(data, n, 2, is_nan_float);
    default: return std::nullopt;
  }
}

}  // namespace nrt::exec
