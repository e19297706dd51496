// Calls a generic lambda with a TypeTag<T> for the storage type of a runtime dtype. The groups a
// kernel accepts are a template argument so that no code is instantiated for types it rejects; any
// other dtype is a KernelError naming the target and the dtype.
#pragma once

#include <string>
#include <type_traits>

#include "executor/runtime/kernel.h"
#include "executor/kernels/cpu/element_conversion.h"
#include "core/scalar_type.h"

namespace nrt::exec::cpu {

template <class T>
struct TypeTag {
  using type = T;
};

enum DtypeGroup : unsigned {
  kFloating = 1u,   // f32, f64, f16, bf16
  kIntegral = 2u,   // i8, i16, i32, i64, u8
  kBoolean = 4u,    // bool
  kAllDtypes = 7u,
};

inline Error unsupported_dtype(const KernelContext& ctx, ScalarType dtype) {
  return ctx.error("dtype " + std::string(nrt::short_name(dtype)) + " is not supported");
}

template <unsigned Groups, class F>
Status dispatch_dtype(const KernelContext& ctx, ScalarType dtype, F&& f) {
  auto call = [&](auto tag) -> Status {
    if constexpr (std::is_void_v<decltype(f(tag))>) {
      f(tag);
      return Status::Ok();
    } else {
      return f(tag);
    }
  };
  if constexpr ((Groups & kFloating) != 0) {
    switch (dtype) {
      case ScalarType::FLOAT32: return call(TypeTag<float>{});
      case ScalarType::FLOAT64: return call(TypeTag<double>{});
      case ScalarType::FLOAT16: return call(TypeTag<Half>{});
      case ScalarType::BFLOAT16: return call(TypeTag<BFloat16>{});
      default: break;
    }
  }
  if constexpr ((Groups & kIntegral) != 0) {
    switch (dtype) {
      case ScalarType::INT8: return call(TypeTag<int8_t>{});
      case ScalarType::INT16: return call(TypeTag<int16_t>{});
      case ScalarType::INT32: return call(TypeTag<int32_t>{});
      case ScalarType::INT64: return call(TypeTag<int64_t>{});
      case ScalarType::UINT8: return call(TypeTag<uint8_t>{});
      default: break;
    }
  }
  if constexpr ((Groups & kBoolean) != 0) {
    if (dtype == ScalarType::BOOL) return call(TypeTag<bool>{});
  }
  return unsupported_dtype(ctx, dtype);
}

inline bool is_floating_dtype(ScalarType t) {
  return t == ScalarType::FLOAT32 || t == ScalarType::FLOAT64 || t == ScalarType::FLOAT16 ||
         t == ScalarType::BFLOAT16;
}
inline bool is_integral_dtype(ScalarType t) {
  return t == ScalarType::INT8 || t == ScalarType::INT16 || t == ScalarType::INT32 || t == ScalarType::INT64 ||
         t == ScalarType::UINT8;
}
// The dtypes the CPU kernels compute on.
inline bool is_kernel_dtype(ScalarType t) {
  return is_floating_dtype(t) || is_integral_dtype(t) || t == ScalarType::BOOL;
}

// Bytes per element: the storage type's size for the kernels' dtypes, inline (nrt::element_size
// searches a table, and tiny element-wise kernels ask once per operand per call); any other
// dtype through nrt::element_size.
inline size_t element_size_of(ScalarType t) {
  switch (t) {
    case ScalarType::FLOAT32: return sizeof(float);
    case ScalarType::FLOAT64: return sizeof(double);
    case ScalarType::FLOAT16: return sizeof(Half);
    case ScalarType::BFLOAT16: return sizeof(BFloat16);
    case ScalarType::INT8: return sizeof(int8_t);
    case ScalarType::INT16: return sizeof(int16_t);
    case ScalarType::INT32: return sizeof(int32_t);
    case ScalarType::INT64: return sizeof(int64_t);
    case ScalarType::UINT8: return sizeof(uint8_t);
    case ScalarType::BOOL: return sizeof(bool);
    default: return nrt::element_size(t);
  }
}

}  // namespace nrt::exec::cpu
