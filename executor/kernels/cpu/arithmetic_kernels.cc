// Binary arithmetic with torch's type promotion and broadcasting: add/sub/rsub (with alpha), mul,
// div (true division, or rounding_mode "trunc"/"floor"), remainder and floor_divide (Python
// semantics: results take the divisor's sign, quotients round toward negative infinity), fmod (C
// semantics: the dividend's sign), pow, maximum/minimum (NaN propagates). Integer division by zero is an error, never a trap.
#include <cmath>

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/elementwise_operands.h"
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

Status add_like(KernelContext& ctx, bool subtract, bool reversed) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  NRT_TRY(alpha, read_scalar(ctx, "alpha", 2, ScalarValue::of_int(1)));
  const ScalarType dtype = ops.common;
  if (dtype == ScalarType::BOOL && subtract) return ctx.error("subtraction of bool tensors is not supported");
  if (alpha->is_floating() && !is_floating_dtype(dtype)) {
    return ctx.error("a float alpha needs a floating result, the operands give " + std::string(short_name(dtype)));
  }
  NRT_TRY(out, bind_output_ref(ctx, 0, dtype, ops.shape));
  // rsub computes other - alpha * self.
  const LoopOperand a = ops.as(reversed ? 1 : 0, dtype);
  const LoopOperand b = ops.as(reversed ? 0 : 1, dtype);
  return dispatch_dtype<kAllDtypes>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      const bool scale = alpha->template as<bool>();
      map_binary<T, T, T>(**out, a, b, [scale](bool x, bool y) { return x || (scale && y); });
    } else {
      const C scale = alpha->template as<C>();
      if (scale == C(1)) {
        if (subtract) {
          map_binary<T, T, T>(**out, a, b, [](C x, C y) { return wrapping_sub(x, y); });
        } else {
          map_binary<T, T, T>(**out, a, b, [](C x, C y) { return wrapping_add(x, y); });
        }
      } else if (subtract) {
        map_binary<T, T, T>(**out, a, b, [scale](C x, C y) { return wrapping_sub(x, wrapping_mul(scale, y)); });
      } else {
        map_binary<T, T, T>(**out, a, b, [scale](C x, C y) { return wrapping_add(x, wrapping_mul(scale, y)); });
      }
    }
  });
}

Status add(KernelContext& ctx) { return add_like(ctx, false, false); }
Status sub(KernelContext& ctx) { return add_like(ctx, true, false); }
Status rsub(KernelContext& ctx) { return add_like(ctx, true, true); }

Status mul(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  NRT_TRY(out, bind_output_ref(ctx, 0, ops.common, ops.shape));
  const LoopOperand a = ops.as(0, ops.common), b = ops.as(1, ops.common);
  return dispatch_dtype<kAllDtypes>(ctx, ops.common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (std::is_same_v<T, bool>) {
      map_binary<T, T, T>(**out, a, b, [](bool x, bool y) { return x && y; });
    } else {
      map_binary<T, T, T>(**out, a, b, [](C x, C y) { return wrapping_mul(x, y); });
    }
  });
}

// Python's floor division and modulo for floating point, as torch and NumPy compute them (fmod
// based, so that q * b + r == a holds as closely as rounding allows).
template <class C>
C floor_divide_floating(C a, C b) {
  if (b == C(0)) return a / b;
  const C mod = std::fmod(a, b);
  C div = (a - mod) / b;
  if (mod != C(0) && (b < C(0)) != (mod < C(0))) div -= C(1);
  if (div == C(0)) return std::copysign(C(0), a / b);
  C floored = std::floor(div);
  if (div - floored > C(0.5)) floored += C(1);
  return floored;
}

template <class C>
C remainder_floating(C a, C b) {
  C mod = std::fmod(a, b);
  if (mod != C(0) && (b < C(0)) != (mod < C(0))) mod += b;
  return mod;
}

// Integer quotient rounded toward zero or toward negative infinity; b != 0.
template <class C>
C divide_integer(C a, C b, bool floor) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return wrapping_neg(a);  // the one overflowing case, INT_MIN / -1
    C q = static_cast<C>(a / b);
    if (floor && static_cast<C>(a % b) != C(0) && ((a < C(0)) != (b < C(0)))) q = static_cast<C>(q - 1);
    return q;
  } else {
    (void)floor;
    return static_cast<C>(a / b);
  }
}

template <class C>
C remainder_integer(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return C(0);
    C r = static_cast<C>(a % b);
    if (r != C(0) && ((r < C(0)) != (b < C(0)))) r = static_cast<C>(r + b);
    return r;
  } else {
    return static_cast<C>(a % b);
  }
}

enum class Division { kTrue, kTrunc, kFloor };

Status divide_with(KernelContext& ctx, Division mode) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  const ScalarType dtype =
      mode == Division::kTrue && !is_floating_dtype(ops.common) ? ScalarType::FLOAT32 : ops.common;
  if (dtype == ScalarType::BOOL) return ctx.error("rounding division of bool tensors is not supported");
  NRT_TRY(out, bind_output_ref(ctx, 0, dtype, ops.shape));
  const LoopOperand a = ops.as(0, dtype), b = ops.as(1, dtype);
  bool divided_by_zero = false;
  Status status = dispatch_dtype<kFloating | kIntegral>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (is_floating_v<T>) {
      switch (mode) {
        case Division::kTrue: map_binary<T, T, T>(**out, a, b, [](C x, C y) { return x / y; }); break;
        case Division::kTrunc: map_binary<T, T, T>(**out, a, b, [](C x, C y) { return std::trunc(x / y); }); break;
        case Division::kFloor: map_binary<T, T, T>(**out, a, b, floor_divide_floating<C>); break;
      }
    } else {
      const bool floor = mode == Division::kFloor;
      map_binary<T, T, T>(**out, a, b, [&divided_by_zero, floor](C x, C y) {
        if (y == C(0)) {
          divided_by_zero = true;
          return C(0);
        }
        return divide_integer(x, y, floor);
      });
    }
  });
  if (!status.ok()) return status;
  if (divided_by_zero) return ctx.error("integer division by zero");
  return Status::Ok();
}

Status div(KernelContext& ctx) { return divide_with(ctx, Division::kTrue); }

Status div_mode(KernelContext& ctx) {
  NRT_TRY(mode, read_optional_string(ctx, "rounding_mode", 2));
  if (!mode->has_value()) return divide_with(ctx, Division::kTrue);
  if (**mode == "trunc") return divide_with(ctx, Division::kTrunc);
  if (**mode == "floor") return divide_with(ctx, Division::kFloor);
  return ctx.error("rounding_mode must be 'trunc', 'floor' or None, got '" + **mode + "'");
}

Status floor_divide(KernelContext& ctx) { return divide_with(ctx, Division::kFloor); }

template <class C>
C fmod_integer(C a, C b) {
  if constexpr (std::is_signed_v<C>) {
    if (b == C(-1)) return C(0);  // INT_MIN % -1 overflows in C
  }
  return static_cast<C>(a % b);
}

// remainder (Python's sign: the divisor's) and fmod (C's: the dividend's).
enum class Modulo { kRemainder, kFmod };

template <Modulo kModulo>
Status modulo(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  const char* name = kModulo == Modulo::kRemainder ? "remainder" : "fmod";
  if (ops.common == ScalarType::BOOL) return ctx.error(std::string(name) + " of bool tensors is not supported");
  NRT_TRY(out, bind_output_ref(ctx, 0, ops.common, ops.shape));
  const LoopOperand a = ops.as(0, ops.common), b = ops.as(1, ops.common);
  bool divided_by_zero = false;
  Status status = dispatch_dtype<kFloating | kIntegral>(ctx, ops.common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (is_floating_v<T>) {
      if constexpr (kModulo == Modulo::kRemainder) {
        map_binary<T, T, T>(**out, a, b, remainder_floating<C>);
      } else {
        map_binary<T, T, T>(**out, a, b, [](C x, C y) { return std::fmod(x, y); });
      }
    } else {
      map_binary<T, T, T>(**out, a, b, [&divided_by_zero](C x, C y) {
        if (y == C(0)) {
          divided_by_zero = true;
          return C(0);
        }
        return kModulo == Modulo::kRemainder ? remainder_integer(x, y) : fmod_integer(x, y);
      });
    }
  });
  if (!status.ok()) return status;
  if (divided_by_zero) return ctx.error("integer modulo by zero");
  return Status::Ok();
}

// Integer power by squaring with wrap-around; negative exponents give 0 except for bases 1 and -1
// (torch's CPU result for tensor exponents).
template <class C>
C integer_power(C base, C exponent) {
  if constexpr (std::is_signed_v<C>) {
    if (exponent < C(0)) {
      if (base == C(1)) return C(1);
      if (base == C(-1)) return (exponent % 2 == 0) ? C(1) : C(-1);
      return C(0);
    }
  }
  C result = C(1);
  while (exponent != C(0)) {
    if (exponent & C(1)) result = wrapping_mul(result, base);
    base = wrapping_mul(base, base);
    exponent = static_cast<C>(exponent >> 1);
  }
  return result;
}

Status pow_with(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"exponent", 1}}, ops));
  const ScalarType dtype = ops.common;
  if (dtype == ScalarType::BOOL) return ctx.error("pow of bool tensors is not supported");
  if (const Operand& e = ops.operand(1);
      e.tensor == nullptr && is_integral_dtype(dtype) && !e.scalar.is_floating() && e.scalar.integer < 0) {
    return ctx.error("integers to negative integer powers are not allowed");
  }
  NRT_TRY(out, bind_output_ref(ctx, 0, dtype, ops.shape));
  const LoopOperand a = ops.as(0, dtype), b = ops.as(1, dtype);
  return dispatch_dtype<kFloating | kIntegral>(ctx, dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    if constexpr (is_floating_v<T>) {
      // A scalar exponent torch computes without pow (its pow_tensor_scalar kernels), for its bits
      // and for speed: std::pow took 15% of a small Llama's run (RMSNorm's x.pow(2)).
      const Operand& e = ops.operand(1);
      const double exponent = e.tensor == nullptr && ops.operand(0).tensor != nullptr ? e.scalar.to_double() : 0.25;
      if (exponent == 2.0) return map_unary<T, T>(**out, a, [](C x) { return x * x; });
      if (exponent == 3.0) return map_unary<T, T>(**out, a, [](C x) { return x * x * x; });
      if (exponent == -2.0) return map_unary<T, T>(**out, a, [](C x) { return C(1) / (x * x); });
      if (exponent == 0.5) return map_unary<T, T>(**out, a, [](C x) { return std::sqrt(x); });
      if (exponent == -0.5) return map_unary<T, T>(**out, a, [](C x) { return C(1) / std::sqrt(x); });
      if (exponent == -1.0) return map_unary<T, T>(**out, a, [](C x) { return C(1) / x; });
      map_binary<T, T, T>(**out, a, b, [](C x, C y) { return std::pow(x, y); });
    } else {
      map_binary<T, T, T>(**out, a, b, integer_power<C>);
    }
  });
}

template <bool kMaximum>
Status extremum(KernelContext& ctx) {
  ElementwiseOperands ops;
  NRT_RETURN_IF_ERROR(read_elementwise(ctx, {{"self", 0}, {"other", 1}}, ops));
  NRT_TRY(out, bind_output_ref(ctx, 0, ops.common, ops.shape));
  const LoopOperand a = ops.as(0, ops.common), b = ops.as(1, ops.common);
  return dispatch_dtype<kAllDtypes>(ctx, ops.common, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using C = compute_t<T>;
    map_binary<T, T, T>(**out, a, b, [](C x, C y) {
      if constexpr (std::is_floating_point_v<C>) {
        if (std::isnan(x)) return x;
        if (std::isnan(y)) return y;
      }
      if constexpr (kMaximum) {
        return x > y ? x : y;
      } else {
        return x < y ? x : y;
      }
    });
  });
}

constexpr DeviceKind kCpu = DeviceKind::kCpu;
const KernelRegistration kRegistrations[] = {
    {"aten::add.Tensor", kCpu, {&add, false}},
    {"aten::add.Scalar", kCpu, {&add, false}},
    {"aten::sub.Tensor", kCpu, {&sub, false}},
    {"aten::sub.Scalar", kCpu, {&sub, false}},
    {"aten::rsub.Tensor", kCpu, {&rsub, false}},
    {"aten::rsub.Scalar", kCpu, {&rsub, false}},
    {"aten::mul.Tensor", kCpu, {&mul, false}},
    {"aten::mul.Scalar", kCpu, {&mul, false}},
    {"aten::div.Tensor", kCpu, {&div, false}},
    {"aten::div.Scalar", kCpu, {&div, false}},
    {"aten::div.Tensor_mode", kCpu, {&div_mode, false}},
    {"aten::div.Scalar_mode", kCpu, {&div_mode, false}},
    {"aten::floor_divide.default", kCpu, {&floor_divide, false}},
    {"aten::floor_divide.Scalar", kCpu, {&floor_divide, false}},
    {"aten::remainder.Tensor", kCpu, {&modulo<Modulo::kRemainder>, false}},
    {"aten::remainder.Scalar", kCpu, {&modulo<Modulo::kRemainder>, false}},
    {"aten::fmod.Tensor", kCpu, {&modulo<Modulo::kFmod>, false}},
    {"aten::fmod.Scalar", kCpu, {&modulo<Modulo::kFmod>, false}},
    {"aten::pow.Tensor_Tensor", kCpu, {&pow_with, false}},
    {"aten::pow.Tensor_Scalar", kCpu, {&pow_with, false}},
    {"aten::pow.Scalar", kCpu, {&pow_with, false}},
    {"aten::maximum.default", kCpu, {&extremum<true>, false}},
    {"aten::minimum.default", kCpu, {&extremum<false>, false}},
    {"aten::max.other", kCpu, {&extremum<true>, false}},
    {"aten::min.other", kCpu, {&extremum<false>, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
