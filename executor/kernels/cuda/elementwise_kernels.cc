// The element-wise ops on CUDA: arguments read, promoted and broadcast by the CPU kernels' shared
// rules (executor/kernels/cpu/operand.h, type_promotion.h), then one launch of the generic strided
// kernel (elementwise_kernels.cu). Operands of another dtype than the computation's are converted
// on the device first.
#include <optional>
#include <string>
#include <vector>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cuda/kernel_support.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cuda {
namespace {

using cpu::Operand;

bool is_floating(ScalarType t) {
  return t == ScalarType::FLOAT32 || t == ScalarType::FLOAT64 || t == ScalarType::FLOAT16 || t == ScalarType::BFLOAT16;
}

// Binds output 0 of `dtype` and `sizes`, and the launch's output operand.
Result<Tensor> bind(KernelContext& ctx, ScalarType dtype, const cpu::DimVector& shape) {
  return cpu::bind_output(ctx, 0, dtype, std::vector<int64_t>(shape.begin(), shape.end()));
}

// Fills the launch for `out` and the tensor operands (broadcast to out's sizes).
Status fill_launch(ElementwiseLaunch& launch, const Tensor& out, std::span<const Tensor> inputs) {
  std::vector<std::vector<int64_t>> strides{out.strides()};
  for (size_t k = 0; k < inputs.size(); ++k) {
    const Tensor view = inputs[k].sizes() == out.sizes() ? inputs[k] : cpu::expand_to(inputs[k], out.sizes());
    strides.push_back(view.strides());
    launch.in[k] = view.raw_data();
  }
  bool dense = false;
  NRT_TRY(indexer, make_indexer(out.sizes(), strides, &dense));
  launch.indexer = *indexer;
  launch.numel = out.numel();
  launch.contiguous = dense;
  launch.out = out.raw_data();
  launch.out_dtype = out.dtype();
  return {};
}

// self OP other [* alpha]: `self` and `other` tensors or scalars (torch.export records `x + 1` as
// add.Tensor with an int `other`).
Status binary(KernelContext& ctx, BinaryOp op, bool has_alpha = false, const char* other_name = "other") {
  NRT_TRY(a, cpu::read_operand(ctx, "self", 0));
  NRT_TRY(b, cpu::read_operand(ctx, other_name, 1));
  const Operand operands[2] = {*a, *b};
  ScalarType compute = cpu::operands_result_type(operands);
  if (compute == ScalarType::UNKNOWN) return ctx.error("operands of unsupported dtypes");
  if (op == BinaryOp::kDiv && !is_floating(compute)) compute = ScalarType::FLOAT32;  // true division
  if ((op == BinaryOp::kBitwiseAnd || op == BinaryOp::kBitwiseOr) && is_floating(compute)) {
    return ctx.error("bitwise ops need integer or bool operands");
  }
  NRT_RETURN_IF_ERROR(check_dtype(ctx, compute));
  cpu::DimVector shape;
  if (!cpu::operands_broadcast_shape(operands, shape)) return ctx.error("operands do not broadcast");
  ElementwiseLaunch launch;
  if (has_alpha) {
    NRT_TRY(alpha, cpu::read_scalar(ctx, "alpha", 2, cpu::ScalarValue::of_int(1)));
    launch.alpha = alpha->to_double();
  }
  if ((op == BinaryOp::kFmod || op == BinaryOp::kRemainder) && !is_floating(compute) && b->tensor == nullptr &&
      b->scalar.to_double() == 0) {
    return ctx.error("integer division by zero");
  }
  if (op == BinaryOp::kPow && !is_floating(compute) && b->tensor == nullptr && b->scalar.to_double() < 0) {
    return ctx.error("integers to negative integer powers are not allowed");
  }
  const ScalarType out_dtype = gives_bool(op) ? ScalarType::BOOL : compute;
  NRT_TRY(out, bind(ctx, out_dtype, shape));
  // Scalars travel as numbers; a scalar `self` (rare: rsub, pow.Scalar) becomes a tensor.
  if ((op == BinaryOp::kFmod || op == BinaryOp::kRemainder) && !is_floating(compute) && b->tensor != nullptr) {
    // Integer modulo by zero is an error, as on the CPU: the divisor is read on the host.
    NRT_TRY(divisor, as_dtype(ctx, *b->tensor, ScalarType::INT64));
    NRT_TRY(host, copy_to_device(*divisor, Device{}));
    const Tensor dense = host->is_contiguous() ? *host : exec::contiguous_copy(*host);
    for (int64_t i = 0; i < dense.numel(); ++i) {
      if (dense.data<int64_t>()[i] == 0) return ctx.error("integer modulo by zero");
    }
  }
  std::vector<Tensor> inputs;
  if (a->tensor == nullptr) return ctx.error("a scalar self is not supported on CUDA");
  NRT_TRY(x, as_dtype(ctx, *a->tensor, compute));
  inputs.push_back(*x);
  if (b->tensor != nullptr) {
    NRT_TRY(y, as_dtype(ctx, *b->tensor, compute));
    inputs.push_back(*y);
  } else {
    launch.scalar_operand = true;
    launch.scalar = b->scalar.to_double();
    launch.scalar_integer = b->scalar.is_floating() ? static_cast<int64_t>(b->scalar.real) : b->scalar.integer;
  }
  NRT_RETURN_IF_ERROR(fill_launch(launch, *out, inputs));
  launch.in_dtype = compute;
  return launch_result(ctx, launch_binary(op, launch, context_of(ctx).stream), "binary kernel launch");
}

Status unary(KernelContext& ctx, UnaryOp op, const char* name = "self") {
  NRT_TRY(self, ctx.tensor(name, 0));
  ScalarType compute = self->dtype();
  NRT_RETURN_IF_ERROR(check_dtype(ctx, compute));
  // torch computes the floating functions of integer tensors in the default float dtype.
  if (!is_floating(compute) && !integer_unary(op)) compute = ScalarType::FLOAT32;
  const ScalarType out_dtype = op == UnaryOp::kLogicalNot ? ScalarType::BOOL : compute;
  NRT_TRY(out, bind(ctx, out_dtype, cpu::DimVector(self->sizes())));
  NRT_TRY(x, as_dtype(ctx, *self, compute));
  ElementwiseLaunch launch;
  const Tensor inputs[1] = {*x};
  NRT_RETURN_IF_ERROR(fill_launch(launch, *out, inputs));
  launch.in_dtype = compute;
  return launch_result(ctx, launch_unary(op, launch, context_of(ctx).stream), "unary kernel launch");
}

// gelu(Tensor self, *, str approximate='none')
Status gelu(KernelContext& ctx) {
  NRT_TRY(approximate, cpu::read_optional_string(ctx, "approximate", 1));
  const std::string mode = approximate->value_or("none");
  if (mode != "none" && mode != "tanh") return ctx.error("approximate must be 'none' or 'tanh', not '" + mode + "'");
  return unary(ctx, mode == "tanh" ? UnaryOp::kGeluTanh : UnaryOp::kGelu);
}

// where.self(Tensor condition, Tensor self, Tensor other)
Status where(KernelContext& ctx) {
  NRT_TRY(condition, ctx.tensor("condition", 0));
  NRT_TRY(a, cpu::read_operand(ctx, "self", 1));
  NRT_TRY(b, cpu::read_operand(ctx, "other", 2));
  const Operand operands[2] = {*a, *b};
  const ScalarType compute = cpu::operands_result_type(operands);
  NRT_RETURN_IF_ERROR(check_dtype(ctx, compute));
  const std::vector<int64_t> none;
  auto shape = cpu::broadcast_shapes(condition->sizes(), a->tensor ? a->tensor->sizes() : none);
  if (shape) shape = cpu::broadcast_shapes(*shape, b->tensor ? b->tensor->sizes() : none);
  if (!shape) return ctx.error("operands do not broadcast");
  NRT_TRY(out, cpu::bind_output(ctx, 0, compute, *shape));
  NRT_TRY(c, as_dtype(ctx, *condition, ScalarType::BOOL));
  // A scalar operand becomes one element of the computation's dtype on the device.
  auto operand = [&](const Operand& o) -> Result<Tensor> {
    if (o.tensor != nullptr) return as_dtype(ctx, *o.tensor, compute);
    return cpu::scalar_on(o.scalar, compute, out->device());
  };
  NRT_TRY(x, operand(*a));
  NRT_TRY(y, operand(*b));
  ElementwiseLaunch launch;
  const Tensor inputs[3] = {*c, *x, *y};
  NRT_RETURN_IF_ERROR(fill_launch(launch, *out, inputs));
  launch.in_dtype = compute;
  return launch_result(ctx, launch_where(launch, context_of(ctx).stream), "where kernel launch");
}

// masked_fill.Scalar(Tensor self, Tensor mask, Scalar value): where(mask, value, self).
Status masked_fill(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(mask, ctx.tensor("mask", 1));
  NRT_TRY(value, cpu::read_scalar(ctx, "value", 2));
  NRT_RETURN_IF_ERROR(check_dtype(ctx, self->dtype()));
  if (mask->dtype() != ScalarType::BOOL) return ctx.error("mask must be bool, got " + mask->type_string());
  if (!cpu::broadcasts_to(mask->sizes(), self->sizes())) return ctx.error("mask does not broadcast to self");
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), self->sizes()));
  // The value as one element of self's dtype on the device, read with stride 0.
  NRT_TRY(fill, cpu::scalar_on(*value, self->dtype(), out->device()));
  const Tensor filled = cpu::expand_to(*fill, self->sizes());
  ElementwiseLaunch launch;
  const Tensor inputs[3] = {*mask, filled, *self};
  NRT_RETURN_IF_ERROR(fill_launch(launch, *out, inputs));
  launch.in_dtype = self->dtype();
  return launch_result(ctx, launch_where(launch, context_of(ctx).stream), "masked_fill launch");
}

// clamp(Tensor self, Scalar? min=None, Scalar? max=None)
Status clamp(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(lo, cpu::read_optional_scalar(ctx, "min", 1));
  NRT_TRY(hi, cpu::read_optional_scalar(ctx, "max", 2));
  NRT_RETURN_IF_ERROR(check_dtype(ctx, self->dtype()));
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), self->sizes()));
  ElementwiseLaunch launch;
  const Tensor inputs[1] = {*self};
  NRT_RETURN_IF_ERROR(fill_launch(launch, *out, inputs));
  launch.in_dtype = self->dtype();
  return launch_result(ctx,
                       launch_clamp(launch, lo->has_value(), *lo ? (*lo)->to_double() : 0.0, hi->has_value(),
                                    *hi ? (*hi)->to_double() : 0.0, context_of(ctx).stream),
                       "clamp kernel launch");
}

constexpr DeviceKind kCuda = DeviceKind::kCuda;
#define NRT_BINARY(target, op) {target, kCuda, {[](KernelContext& ctx) { return binary(ctx, op); }, false}}
#define NRT_UNARY(target, op) {target, kCuda, {[](KernelContext& ctx) { return unary(ctx, op); }, false}}
const KernelRegistration kRegistrations[] = {
    {"aten::add.Tensor", kCuda, {[](KernelContext& ctx) { return binary(ctx, BinaryOp::kAdd, true); }, false}},
    {"aten::add.Scalar", kCuda, {[](KernelContext& ctx) { return binary(ctx, BinaryOp::kAdd, true); }, false}},
    {"aten::sub.Tensor", kCuda, {[](KernelContext& ctx) { return binary(ctx, BinaryOp::kSub, true); }, false}},
    {"aten::sub.Scalar", kCuda, {[](KernelContext& ctx) { return binary(ctx, BinaryOp::kSub, true); }, false}},
    NRT_BINARY("aten::mul.Tensor", BinaryOp::kMul),
    NRT_BINARY("aten::mul.Scalar", BinaryOp::kMul),
    NRT_BINARY("aten::div.Tensor", BinaryOp::kDiv),
    NRT_BINARY("aten::div.Scalar", BinaryOp::kDiv),
    NRT_BINARY("aten::maximum.default", BinaryOp::kMaximum),
    NRT_BINARY("aten::minimum.default", BinaryOp::kMinimum),
    NRT_BINARY("aten::max.other", BinaryOp::kMaximum),
    NRT_BINARY("aten::min.other", BinaryOp::kMinimum),
    NRT_BINARY("aten::fmod.Scalar", BinaryOp::kFmod),
    NRT_BINARY("aten::fmod.Tensor", BinaryOp::kFmod),
    NRT_BINARY("aten::remainder.Scalar", BinaryOp::kRemainder),
    NRT_BINARY("aten::remainder.Tensor", BinaryOp::kRemainder),
    {"aten::pow.Tensor_Scalar", kCuda, {[](KernelContext& ctx) { return binary(ctx, BinaryOp::kPow, false, "exponent"); }, false}},
    {"aten::pow.Tensor_Tensor", kCuda, {[](KernelContext& ctx) { return binary(ctx, BinaryOp::kPow, false, "exponent"); }, false}},
    NRT_BINARY("aten::eq.Tensor", BinaryOp::kEq),
    NRT_BINARY("aten::eq.Scalar", BinaryOp::kEq),
    NRT_BINARY("aten::ne.Tensor", BinaryOp::kNe),
    NRT_BINARY("aten::ne.Scalar", BinaryOp::kNe),
    NRT_BINARY("aten::lt.Tensor", BinaryOp::kLt),
    NRT_BINARY("aten::lt.Scalar", BinaryOp::kLt),
    NRT_BINARY("aten::le.Tensor", BinaryOp::kLe),
    NRT_BINARY("aten::le.Scalar", BinaryOp::kLe),
    NRT_BINARY("aten::gt.Tensor", BinaryOp::kGt),
    NRT_BINARY("aten::gt.Scalar", BinaryOp::kGt),
    NRT_BINARY("aten::ge.Tensor", BinaryOp::kGe),
    NRT_BINARY("aten::ge.Scalar", BinaryOp::kGe),
    NRT_BINARY("aten::logical_and.default", BinaryOp::kLogicalAnd),
    NRT_BINARY("aten::logical_or.default", BinaryOp::kLogicalOr),
    NRT_BINARY("aten::bitwise_and.Tensor", BinaryOp::kBitwiseAnd),
    NRT_BINARY("aten::__and__.Tensor", BinaryOp::kBitwiseAnd),
    NRT_BINARY("aten::bitwise_or.Tensor", BinaryOp::kBitwiseOr),
    NRT_BINARY("aten::__or__.Tensor", BinaryOp::kBitwiseOr),
    NRT_UNARY("aten::neg.default", UnaryOp::kNeg),
    NRT_UNARY("aten::abs.default", UnaryOp::kAbs),
    NRT_UNARY("aten::relu.default", UnaryOp::kRelu),
    NRT_UNARY("aten::silu.default", UnaryOp::kSilu),
    NRT_UNARY("aten::sigmoid.default", UnaryOp::kSigmoid),
    NRT_UNARY("aten::tanh.default", UnaryOp::kTanh),
    NRT_UNARY("aten::exp.default", UnaryOp::kExp),
    NRT_UNARY("aten::log.default", UnaryOp::kLog),
    NRT_UNARY("aten::sqrt.default", UnaryOp::kSqrt),
    NRT_UNARY("aten::rsqrt.default", UnaryOp::kRsqrt),
    NRT_UNARY("aten::erf.default", UnaryOp::kErf),
    NRT_UNARY("aten::sin.default", UnaryOp::kSin),
    NRT_UNARY("aten::cos.default", UnaryOp::kCos),
    NRT_UNARY("aten::reciprocal.default", UnaryOp::kReciprocal),
    NRT_UNARY("aten::logical_not.default", UnaryOp::kLogicalNot),
    NRT_UNARY("aten::hardswish.default", UnaryOp::kHardswish),
    NRT_UNARY("aten::hardsigmoid.default", UnaryOp::kHardsigmoid),
    {"aten::masked_fill.Scalar", kCuda, {&masked_fill, false}},
    {"aten::gelu.default", kCuda, {&gelu, false}},
    {"aten::where.self", kCuda, {&where, false}},
    {"aten::where.ScalarSelf", kCuda, {&where, false}},
    {"aten::where.ScalarOther", kCuda, {&where, false}},
    {"aten::where.Scalar", kCuda, {&where, false}},
    {"aten::clamp.default", kCuda, {&clamp, false}},
};
#undef NRT_BINARY
#undef NRT_UNARY

}  // namespace
}  // namespace nrt::exec::cuda
