// Symbolic values at run time: sizes of tensors (sym_size, sym_numel, sym_stride,
// sym_storage_offset), the value of a one-element tensor (item, _local_scalar_dense: a float,
// an int or a bool after the tensor's dtype), Python arithmetic on ints, floats and bools as torch.export records it
// (_operator.add, ..., math.ceil, torch.sym_max, ...), and the runtime assertions export inserts.
//
// Python semantics: int op int stays int (an int64 overflow is an error, Python ints being
// unbounded), floor division and modulo round toward negative infinity (the remainder takes the
// divisor's sign), true division always gives a float, division by zero is an error, bools count
// as ints in arithmetic. Inputs of the Python callables are positional (a, b / x).
#include <cmath>
#include <limits>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"

namespace nrt::exec::cpu {
namespace {

// sym_size.int(Tensor self, int dim) -> SymInt
Status sym_size(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  if (self->dim() == 0) return ctx.error("a 0-d tensor has no sizes");
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  return set_output(ctx, 0, RuntimeValue(self->sizes()[static_cast<size_t>(*d)]));
}

// sym_stride.int(Tensor self, int dim) -> SymInt
Status sym_stride(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  if (self->dim() == 0) return ctx.error("a 0-d tensor has no strides");
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  return set_output(ctx, 0, RuntimeValue(self->strides()[static_cast<size_t>(*d)]));
}

Status sym_numel(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  return set_output(ctx, 0, RuntimeValue(self->numel()));
}

Status sym_storage_offset(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  return set_output(ctx, 0, RuntimeValue(self->storage_offset()));
}

// _local_scalar_dense(Tensor self) -> Scalar
Status local_scalar(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (self->numel() != 1) {
    return ctx.error("a tensor with " + std::to_string(self->numel()) + " elements cannot be converted to a number");
  }
  RuntimeValue value;
  Status status = dispatch_dtype<kAllDtypes>(ctx, self->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto x = load(*self->template data<T>());
    if constexpr (std::is_same_v<T, bool>) {
      value = x;
    } else if constexpr (is_floating_v<T>) {
      value = static_cast<double>(x);
    } else {
      value = static_cast<int64_t>(x);
    }
  });
  if (!status.ok()) return status;
  return set_output(ctx, 0, std::move(value));
}

// Positional input i of a Python callable, as a number.
Result<ScalarValue> number_at(const KernelContext& ctx, size_t i) {
  if (i >= ctx.inputs().size()) return ctx.error("expects " + std::to_string(i + 1) + " arguments");
  const RuntimeValue& v = *ctx.inputs()[i].value;
  if (const auto* b = std::get_if<bool>(&v)) return ScalarValue::of_bool(*b);
  if (const auto* n = std::get_if<int64_t>(&v)) return ScalarValue::of_int(*n);
  if (const auto* d = std::get_if<double>(&v)) return ScalarValue::of_float(*d);
  return ctx.error("argument " + std::to_string(i) + " is not a number");
}

Result<std::pair<ScalarValue, ScalarValue>> number_pair(const KernelContext& ctx) {
  NRT_TRY(a, number_at(ctx, 0));
  NRT_TRY(b, number_at(ctx, 1));
  return std::make_pair(*a, *b);
}

Status int_result(KernelContext& ctx, bool overflowed, int64_t value) {
  if (overflowed) return ctx.error("integer overflow");
  return set_output(ctx, 0, RuntimeValue(value));
}

enum class Arithmetic { kAdd, kSub, kMul, kFloorDiv, kMod, kTrueDiv, kPow, kMax, kMin };

template <Arithmetic kOp>
Status arithmetic(KernelContext& ctx) {
  NRT_TRY(operands, number_pair(ctx));
  const auto [a, b] = *operands;
  const bool floating = a.is_floating() || b.is_floating();
  if (kOp == Arithmetic::kTrueDiv || floating) {
    const double x = a.to_double(), y = b.to_double();
    double r = 0.0;
    switch (kOp) {
      case Arithmetic::kAdd: r = x + y; break;
      case Arithmetic::kSub: r = x - y; break;
      case Arithmetic::kMul: r = x * y; break;
      case Arithmetic::kTrueDiv:
        if (y == 0.0) return ctx.error("division by zero");
        r = x / y;
        break;
      case Arithmetic::kFloorDiv: {
        if (y == 0.0) return ctx.error("float floor division by zero");
        const double mod = std::fmod(x, y);
        double div = (x - mod) / y;
        if (mod != 0.0 && (y < 0.0) != (mod < 0.0)) div -= 1.0;
        if (div == 0.0) {
          r = std::copysign(0.0, x / y);
        } else {
          r = std::floor(div);
          if (div - r > 0.5) r += 1.0;
        }
        break;
      }
      case Arithmetic::kMod: {
        if (y == 0.0) return ctx.error("float modulo by zero");
        r = std::fmod(x, y);
        if (r != 0.0) {
          if ((y < 0.0) != (r < 0.0)) r += y;
        } else {
          r = std::copysign(0.0, y);
        }
        break;
      }
      case Arithmetic::kPow:
        if (x == 0.0 && y < 0.0) return ctx.error("0.0 cannot be raised to a negative power");
        r = std::pow(x, y);
        break;
      case Arithmetic::kMax: r = (std::isnan(x) || x > y) ? x : y; break;
      case Arithmetic::kMin: r = (std::isnan(x) || x < y) ? x : y; break;
    }
    // sym_max/sym_min of an int and a float keep the winner's kind in Python.
    if ((kOp == Arithmetic::kMax || kOp == Arithmetic::kMin) && !(r == x ? a : b).is_floating()) {
      return set_output(ctx, 0, RuntimeValue((r == x ? a : b).integer));
    }
    return set_output(ctx, 0, RuntimeValue(r));
  }
  const int64_t x = a.integer, y = b.integer;
  int64_t r = 0;
  switch (kOp) {
    case Arithmetic::kAdd: {
      const bool overflowed = __builtin_add_overflow(x, y, &r);
      return int_result(ctx, overflowed, r);
    }
    case Arithmetic::kSub: {
      const bool overflowed = __builtin_sub_overflow(x, y, &r);
      return int_result(ctx, overflowed, r);
    }
    case Arithmetic::kMul: {
      const bool overflowed = __builtin_mul_overflow(x, y, &r);
      return int_result(ctx, overflowed, r);
    }
    case Arithmetic::kFloorDiv: {
      if (y == 0) return ctx.error("integer division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return ctx.error("integer overflow");
      r = x / y;
      if (x % y != 0 && ((x < 0) != (y < 0))) --r;
      return int_result(ctx, false, r);
    }
    case Arithmetic::kMod: {
      if (y == 0) return ctx.error("integer modulo by zero");
      if (y == -1) return int_result(ctx, false, 0);
      r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return int_result(ctx, false, r);
    }
    case Arithmetic::kPow: {
      if (y < 0) {
        if (x == 0) return ctx.error("0 cannot be raised to a negative power");
        return set_output(ctx, 0, RuntimeValue(std::pow(static_cast<double>(x), static_cast<double>(y))));
      }
      int64_t result = 1, base = x, exponent = y;
      bool overflowed = false;
      while (exponent > 0) {
        if (exponent & 1) overflowed |= __builtin_mul_overflow(result, base, &result);
        exponent >>= 1;
        if (exponent > 0) overflowed |= __builtin_mul_overflow(base, base, &base);
      }
      return int_result(ctx, overflowed, result);
    }
    case Arithmetic::kMax: return int_result(ctx, false, std::max(x, y));
    case Arithmetic::kMin: return int_result(ctx, false, std::min(x, y));
    case Arithmetic::kTrueDiv: break;
  }
  return ctx.error("unreachable arithmetic");
}

enum class Comparison { kEq, kNe, kLt, kLe, kGt, kGe };

template <Comparison kOp>
Status compare(KernelContext& ctx) {
  NRT_TRY(operands, number_pair(ctx));
  const auto [a, b] = *operands;
  int order = 0;  // -1, 0, 1; NaN compares unordered (all false except !=)
  bool unordered = false;
  if (a.is_floating() || b.is_floating()) {
    const double x = a.to_double(), y = b.to_double();
    unordered = std::isnan(x) || std::isnan(y);
    order = x < y ? -1 : x > y ? 1 : 0;
  } else {
    order = a.integer < b.integer ? -1 : a.integer > b.integer ? 1 : 0;
  }
  bool r = false;
  switch (kOp) {
    case Comparison::kEq: r = !unordered && order == 0; break;
    case Comparison::kNe: r = unordered || order != 0; break;
    case Comparison::kLt: r = !unordered && order < 0; break;
    case Comparison::kLe: r = !unordered && order <= 0; break;
    case Comparison::kGt: r = !unordered && order > 0; break;
    case Comparison::kGe: r = !unordered && order >= 0; break;
  }
  return set_output(ctx, 0, RuntimeValue(r));
}

// and_/or_: bool with bool gives bool, otherwise bitwise on ints (floats are an error, as in Python).
template <bool kAnd>
Status bitwise(KernelContext& ctx) {
  NRT_TRY(operands, number_pair(ctx));
  const auto [a, b] = *operands;
  if (a.is_floating() || b.is_floating()) return ctx.error("bitwise operations need ints or bools");
  const int64_t r = kAnd ? (a.integer & b.integer) : (a.integer | b.integer);
  if (a.kind == ScalarValue::Kind::kBool && b.kind == ScalarValue::Kind::kBool) {
    return set_output(ctx, 0, RuntimeValue(r != 0));
  }
  return set_output(ctx, 0, RuntimeValue(r));
}

Status negate(KernelContext& ctx) {
  NRT_TRY(a, number_at(ctx, 0));
  if (a->is_floating()) return set_output(ctx, 0, RuntimeValue(-a->real));
  if (a->integer == std::numeric_limits<int64_t>::min()) return ctx.error("integer overflow");
  return set_output(ctx, 0, RuntimeValue(-a->integer));
}

Status logical_not(KernelContext& ctx) {
  NRT_TRY(a, number_at(ctx, 0));
  return set_output(ctx, 0, RuntimeValue(a->is_floating() ? a->real == 0.0 : a->integer == 0));
}

Status to_float(KernelContext& ctx) {
  NRT_TRY(a, number_at(ctx, 0));
  return set_output(ctx, 0, RuntimeValue(a->to_double()));
}

// math.ceil / math.floor / math.trunc and torch.sym_int (truncation): ints pass through.
enum class Rounding { kCeil, kFloor, kTrunc };

template <Rounding kMode>
Status to_int(KernelContext& ctx) {
  NRT_TRY(a, number_at(ctx, 0));
  if (!a->is_floating()) return set_output(ctx, 0, RuntimeValue(a->integer));
  const double x = kMode == Rounding::kCeil ? std::ceil(a->real) : kMode == Rounding::kFloor ? std::floor(a->real)
                                                                                            : std::trunc(a->real);
  if (!std::isfinite(x) || x < -9.223372036854775808e18 || x >= 9.223372036854775808e18) {
    return ctx.error("cannot convert " + std::to_string(a->real) + " to an int64");
  }
  return set_output(ctx, 0, RuntimeValue(static_cast<int64_t>(x)));
}

// _assert_scalar(Scalar self, str assert_msg): fails the run when false.
Status assert_scalar(KernelContext& ctx) {
  NRT_TRY(value, read_scalar(ctx, "self", 0));
  const bool holds = value->is_floating() ? value->real != 0.0 : value->integer != 0;
  if (holds) return Status::Ok();
  auto message = read_optional_string(ctx, "assert_msg", 1);
  return ctx.error("runtime assertion failed: " + (message && message->has_value() ? **message : std::string("")));
}

// sym_constrain_range(_for_size) record value ranges for the compiler; their checks are also
// emitted as _assert_scalar nodes, so at run time they do nothing.
Status no_op(KernelContext&) { return Status::Ok(); }

// _assert_tensor_metadata(Tensor a, SymInt[]? size=None, SymInt[]? stride=None, ScalarType? dtype=None, ...)
Status assert_tensor_metadata(KernelContext& ctx) {
  NRT_TRY(a, ctx.tensor("a", 0));
  const RuntimeValue* size = ctx.find("size", 1);
  if (const auto* sizes = size ? std::get_if<std::vector<int64_t>>(size) : nullptr; sizes && *sizes != a->sizes()) {
    return ctx.error("tensor sizes differ from the exported ones");
  }
  NRT_TRY(dtype, ctx.scalar_type("dtype", 3));
  if (*dtype && **dtype != a->dtype()) return ctx.error("tensor dtype differs from the exported one");
  return Status::Ok();
}

const NamedKernel kSymbolicKernels[] = {
    {"aten::sym_size.int", {&sym_size, false}},
    {"aten::sym_stride.int", {&sym_stride, false}},
    {"aten::sym_numel.default", {&sym_numel, false}},
    {"aten::sym_storage_offset.default", {&sym_storage_offset, false}},
    {"_operator.add", {&arithmetic<Arithmetic::kAdd>, false}},
    {"_operator.sub", {&arithmetic<Arithmetic::kSub>, false}},
    {"_operator.mul", {&arithmetic<Arithmetic::kMul>, false}},
    {"_operator.floordiv", {&arithmetic<Arithmetic::kFloorDiv>, false}},
    {"_operator.mod", {&arithmetic<Arithmetic::kMod>, false}},
    {"_operator.truediv", {&arithmetic<Arithmetic::kTrueDiv>, false}},
    {"_operator.pow", {&arithmetic<Arithmetic::kPow>, false}},
    {"torch.sym_max", {&arithmetic<Arithmetic::kMax>, false}},
    {"torch.sym_min", {&arithmetic<Arithmetic::kMin>, false}},
    {"_operator.eq", {&compare<Comparison::kEq>, false}},
    {"_operator.ne", {&compare<Comparison::kNe>, false}},
    {"_operator.lt", {&compare<Comparison::kLt>, false}},
    {"_operator.le", {&compare<Comparison::kLe>, false}},
    {"_operator.gt", {&compare<Comparison::kGt>, false}},
    {"_operator.ge", {&compare<Comparison::kGe>, false}},
    {"_operator.and_", {&bitwise<true>, false}},
    {"_operator.or_", {&bitwise<false>, false}},
    {"_operator.neg", {&negate, false}},
    {"_operator.not_", {&logical_not, false}},
    {"torch.sym_not", {&logical_not, false}},
    {"torch.sym_float", {&to_float, false}},
    {"torch.sym_int", {&to_int<Rounding::kTrunc>, false}},
    {"math.ceil", {&to_int<Rounding::kCeil>, false}},
    {"math.floor", {&to_int<Rounding::kFloor>, false}},
    {"math.trunc", {&to_int<Rounding::kTrunc>, false}},
    {"aten::_assert_scalar.default", {&assert_scalar, false}},
    {"aten::sym_constrain_range.default", {&no_op, false}},
    {"aten::sym_constrain_range_for_size.default", {&no_op, false}},
    {"aten::_assert_tensor_metadata.default", {&assert_tensor_metadata, false}},
};

// These read a tensor's metadata or compute on scalars, never an element, so they serve CUDA
// too; the two that read an element (item) are the host's alone.
const bool kSymbolicKernelsRegistered = register_for_devices(kSymbolicKernels, {DeviceKind::kCpu, DeviceKind::kCuda});
const KernelRegistration kLocalScalar("aten::_local_scalar_dense.default", DeviceKind::kCpu, {&local_scalar, false});
const KernelRegistration kItem("aten::item.default", DeviceKind::kCpu, {&local_scalar, false});

}  // namespace
}  // namespace nrt::exec::cpu
