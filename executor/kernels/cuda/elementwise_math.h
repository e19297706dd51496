// The element-wise math of the CUDA kernels, per compute type (float for float16, bfloat16 and
// float32; double; int64_t for the integer types and bool), written once for the device and the
// host (host_device.h). torch's rules: NaN propagates through maximum/minimum/relu/clamp; integer
// division by zero is left to the kernels' callers (torch raises; they refuse it before launch).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "executor/kernels/cuda/host_device.h"

namespace nrt::exec::cuda {

enum class BinaryOp : int32_t {
  kAdd,      // a + alpha * b
  kSub,      // a - alpha * b
  kMul,
  kDiv,      // true division (floating compute types only)
  kMaximum,
  kMinimum,
  kPow,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kLogicalAnd,
  kLogicalOr,
  kBitwiseAnd,  // integer compute types only
  kBitwiseOr,
  kFmod,       // C's remainder: the dividend's sign
  kRemainder,  // Python's: the divisor's sign
};

// Comparisons and logical ops give bool whatever the operands' type.
NRT_HOST_DEVICE bool gives_bool(BinaryOp op) { return op >= BinaryOp::kEq && op <= BinaryOp::kLogicalOr; }

enum class UnaryOp : int32_t {
  kIdentity,
  kNeg,
  kAbs,
  kRelu,
  kGelu,      // x/2 (1 + erf(x/sqrt 2))
  kGeluTanh,  // x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
  kSilu,
  kSigmoid,
  kTanh,
  kExp,
  kLog,
  kSqrt,
  kRsqrt,
  kErf,
  kSin,
  kCos,
  kReciprocal,
  kHardswish,   // x * min(max(x + 3, 0), 6) / 6
  kHardsigmoid, // min(max(x + 3, 0), 6) / 6
  kLogicalNot,  // gives bool
};

template <typename T>
NRT_HOST_DEVICE bool is_nan(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return x != x;
  } else {
    return false;
  }
}

template <typename T>
NRT_HOST_DEVICE T apply_binary(BinaryOp op, T a, T b, T alpha) {
  switch (op) {
    case BinaryOp::kAdd: return a + alpha * b;
    case BinaryOp::kSub: return a - alpha * b;
    case BinaryOp::kMul: return a * b;
    case BinaryOp::kDiv: return a / b;
    case BinaryOp::kMaximum: return is_nan(a) ? a : is_nan(b) ? b : (a > b ? a : b);
    case BinaryOp::kMinimum: return is_nan(a) ? a : is_nan(b) ? b : (a < b ? a : b);
    case BinaryOp::kPow:
      if constexpr (std::is_floating_point_v<T>) {
        return std::pow(a, b);
      } else {
        // Integer power by squaring (torch: a negative exponent of an integer is an error, refused
        // before launch; 0^0 = 1).
        T result = 1, base = a;
        for (T e = b; e > 0; e >>= 1) {
          if (e & 1) result *= base;
          base *= base;
        }
        return result;
      }
    case BinaryOp::kEq: return a == b;
    case BinaryOp::kNe: return a != b;
    case BinaryOp::kLt: return a < b;
    case BinaryOp::kLe: return a <= b;
    case BinaryOp::kGt: return a > b;
    case BinaryOp::kGe: return a >= b;
    case BinaryOp::kLogicalAnd: return (a != T(0)) && (b != T(0));
    case BinaryOp::kLogicalOr: return (a != T(0)) || (b != T(0));
    case BinaryOp::kBitwiseAnd:
      if constexpr (std::is_integral_v<T>) return a & b;
      return T(0);
    case BinaryOp::kBitwiseOr:
      if constexpr (std::is_integral_v<T>) return a | b;
      return T(0);
    case BinaryOp::kFmod:
    case BinaryOp::kRemainder: {
      T r;
      if constexpr (std::is_floating_point_v<T>) {
        r = std::fmod(a, b);
      } else {
        r = a % b;  // integer division by zero is refused before launch
      }
      if (op == BinaryOp::kRemainder && r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
      return r;
    }
  }
  return T(0);
}

template <typename T>
NRT_HOST_DEVICE T apply_unary(UnaryOp op, T x) {
  if constexpr (std::is_floating_point_v<T>) {
    constexpr T kHalf = T(0.5), kOne = T(1);
    switch (op) {
      case UnaryOp::kIdentity: return x;
      case UnaryOp::kNeg: return -x;
      case UnaryOp::kAbs: return std::fabs(x);
      case UnaryOp::kRelu: return is_nan(x) ? x : (x > T(0) ? x : T(0));
      case UnaryOp::kGelu: return kHalf * x * (kOne + std::erf(x * T(0.70710678118654752440)));
      case UnaryOp::kGeluTanh: {
        const T inner = T(0.79788456080286535588) * (x + T(0.044715) * x * x * x);
        return kHalf * x * (kOne + std::tanh(inner));
      }
      case UnaryOp::kSilu: return x / (kOne + std::exp(-x));
      case UnaryOp::kSigmoid: return kOne / (kOne + std::exp(-x));
      case UnaryOp::kTanh: return std::tanh(x);
      case UnaryOp::kExp: return std::exp(x);
      case UnaryOp::kLog: return std::log(x);
      case UnaryOp::kSqrt: return std::sqrt(x);
      case UnaryOp::kRsqrt: return kOne / std::sqrt(x);
      case UnaryOp::kErf: return std::erf(x);
      case UnaryOp::kSin: return std::sin(x);
      case UnaryOp::kCos: return std::cos(x);
      case UnaryOp::kReciprocal: return kOne / x;
      case UnaryOp::kHardswish:
      case UnaryOp::kHardsigmoid: {
        T r = x + T(3);
        r = is_nan(r) ? r : (r < T(0) ? T(0) : (r > T(6) ? T(6) : r));
        return op == UnaryOp::kHardswish ? x * r / T(6) : r / T(6);
      }
      case UnaryOp::kLogicalNot: return x == T(0) ? kOne : T(0);
    }
    return x;
  } else {
    switch (op) {
      case UnaryOp::kNeg: return -x;
      case UnaryOp::kAbs: return x < 0 ? -x : x;
      case UnaryOp::kRelu: return x > 0 ? x : 0;
      case UnaryOp::kLogicalNot: return x == 0 ? 1 : 0;
      default: return x;  // the floating-only ops are refused before launch for integers
    }
  }
}

// Whether `op` is defined for an integer (or bool) compute type; the others need floating input.
NRT_HOST_DEVICE bool integer_unary(UnaryOp op) {
  return op == UnaryOp::kIdentity || op == UnaryOp::kNeg || op == UnaryOp::kAbs || op == UnaryOp::kRelu ||
         op == UnaryOp::kLogicalNot;
}

}  // namespace nrt::exec::cuda
