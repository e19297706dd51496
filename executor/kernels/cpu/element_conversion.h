// Element types of the CPU kernels and the conversions between them.
//
// Each storage type T has a compute type compute_t<T> (float for Half and BFloat16, T otherwise):
// kernels load elements into it, compute, and store back. convert<To>(from) casts between any two
// storage or compute types with defined behaviour everywhere: integers wrap (modular, as torch),
// anything -> bool is "!= 0" (NaN is true), and floating -> integer truncates toward zero with
// what torch produces on x86 where C++ leaves it undefined: int64 targets convert through int64,
// narrower ones through int32 and then wrap (300.0 -> uint8 gives 44, -1.0 gives 255); NaN and
// values beyond the intermediate's range give its minimum (x86's "integer indefinite").
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "executor/kernels/cpu/reduced_float.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

template <class T>
inline constexpr bool is_reduced_float_v = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || is_reduced_float_v<T>;
template <class T>
inline constexpr bool is_integral_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

template <class T>
using compute_t = std::conditional_t<is_reduced_float_v<T>, float, T>;

template <class T>
inline compute_t<T> load(T v) {
  if constexpr (is_reduced_float_v<T>) {
    return to_float(v);
  } else {
    return v;
  }
}

template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_reduced_float_v<From>) {
    return convert<To>(to_float(v));
  } else if constexpr (std::is_same_v<To, Half>) {
    return half_from_float(convert<float>(v));
  } else if constexpr (std::is_same_v<To, BFloat16>) {
    return bfloat16_from_float(convert<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (std::is_floating_point_v<From> && is_integral_v<To>) {
    using Wide = std::conditional_t<std::is_same_v<To, int64_t>, int64_t, int32_t>;
    // The bounds are powers of two, exact in every floating type.
    constexpr auto lowest = static_cast<From>(std::numeric_limits<Wide>::lowest());
    if (!(v >= lowest && v < -lowest)) return static_cast<To>(std::numeric_limits<Wide>::lowest());
    return static_cast<To>(static_cast<Wide>(v));
  } else {
    return static_cast<To>(v);
  }
}

template <class T>
inline T store(compute_t<T> v) {
  return convert<T>(v);
}

// The nrt dtype of a storage type.
template <class T>
constexpr ScalarType dtype_of() {
  if constexpr (std::is_same_v<T, float>) return ScalarType::FLOAT32;
  if constexpr (std::is_same_v<T, double>) return ScalarType::FLOAT64;
  if constexpr (std::is_same_v<T, Half>) return ScalarType::FLOAT16;
  if constexpr (std::is_same_v<T, BFloat16>) return ScalarType::BFLOAT16;
  if constexpr (std::is_same_v<T, int8_t>) return ScalarType::INT8;
  if constexpr (std::is_same_v<T, int16_t>) return ScalarType::INT16;
  if constexpr (std::is_same_v<T, int32_t>) return ScalarType::INT32;
  if constexpr (std::is_same_v<T, int64_t>) return ScalarType::INT64;
  if constexpr (std::is_same_v<T, uint8_t>) return ScalarType::UINT8;
  if constexpr (std::is_same_v<T, bool>) return ScalarType::BOOL;
  return ScalarType::UNKNOWN;
}

// Integer add/sub/mul/neg that wrap on overflow like torch's (signed overflow is undefined in C++).
template <class T>
inline T wrapping_add(T a, T b) {
  if constexpr (is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <class T>
inline T wrapping_sub(T a, T b) {
  if constexpr (is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) - static_cast<U>(b)));
  } else {
    return a - b;
  }
}
template <class T>
inline T wrapping_mul(T a, T b) {
  if constexpr (is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    // Promote narrow unsigned types past int so the product cannot overflow a signed int.
    using Wide = std::conditional_t<(sizeof(U) < sizeof(unsigned)), unsigned, U>;
    return static_cast<T>(static_cast<U>(static_cast<Wide>(static_cast<U>(a)) * static_cast<Wide>(static_cast<U>(b))));
  } else {
    return a * b;
  }
}
template <class T>
inline T wrapping_neg(T a) {
  if constexpr (is_integral_v<T>) {
    return wrapping_sub(T(0), a);
  } else {
    return -a;
  }
}

}  // namespace nrt::exec::cpu
