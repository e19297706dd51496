#include "executor/kernels/cpu/operand.h"

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/type_promotion.h"

namespace nrt::exec::cpu {

ScalarType ScalarValue::dtype() const {
  switch (kind) {
    case Kind::kBool: return ScalarType::BOOL;
    case Kind::kInt: return ScalarType::INT64;
    case Kind::kFloat: return ScalarType::FLOAT32;
  }
  return ScalarType::UNKNOWN;
}

namespace {

std::optional<ScalarValue> as_scalar(const RuntimeValue& v) {
  if (const auto* b = std::get_if<bool>(&v)) return ScalarValue::of_bool(*b);
  if (const auto* i = std::get_if<int64_t>(&v)) return ScalarValue::of_int(*i);
  if (const auto* d = std::get_if<double>(&v)) return ScalarValue::of_float(*d);
  return std::nullopt;
}

}  // namespace

Result<Operand> read_operand(const KernelContext& ctx, std::string_view name, int position) {
  const RuntimeValue* v = ctx.find(name, position);
  if (v == nullptr) return ctx.error("missing argument '" + std::string(name) + "'");
  if (const auto* t = std::get_if<Tensor>(v)) {
    if (!is_kernel_dtype(t->dtype())) return unsupported_dtype(ctx, t->dtype());
    return Operand(*t);
  }
  if (auto s = as_scalar(*v)) return Operand(*s);
  return ctx.error("argument '" + std::string(name) + "' is neither a tensor nor a number");
}

Result<ScalarValue> read_scalar(const KernelContext& ctx, std::string_view name, int position,
                                std::optional<ScalarValue> fallback) {
  const RuntimeValue* v = ctx.find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) {
    if (fallback) return *fallback;
    return ctx.error("missing scalar argument '" + std::string(name) + "'");
  }
  if (auto s = as_scalar(*v)) return *s;
  return ctx.error("argument '" + std::string(name) + "' is not a number");
}

Result<std::optional<ScalarValue>> read_optional_scalar(const KernelContext& ctx, std::string_view name,
                                                        int position) {
  const RuntimeValue* v = ctx.find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::optional<ScalarValue>{};
  if (auto s = as_scalar(*v)) return std::optional<ScalarValue>(*s);
  return ctx.error("argument '" + std::string(name) + "' is not a number");
}

Result<std::optional<std::string>> read_optional_string(const KernelContext& ctx, std::string_view name,
                                                        int position) {
  const RuntimeValue* v = ctx.find(name, position);
  if (v == nullptr || std::holds_alternative<std::monostate>(*v)) return std::optional<std::string>{};
  if (const auto* s = std::get_if<std::string>(v)) return std::optional<std::string>(*s);
  return ctx.error("argument '" + std::string(name) + "' is not a string");
}

ScalarType operands_result_type(std::span<const Operand> operands) {
  std::vector<PromotionOperand> promotion;
  for (const auto& op : operands) {
    if (const auto* t = std::get_if<Tensor>(&op)) {
      if (!is_kernel_dtype(t->dtype())) return ScalarType::UNKNOWN;
      promotion.push_back({t->dtype(), t->dim() == 0 ? PromotionClass::kZeroDim : PromotionClass::kTensor});
    } else {
      promotion.push_back({std::get<ScalarValue>(op).dtype(), PromotionClass::kScalar});
    }
  }
  return result_type(promotion);
}

std::optional<std::vector<int64_t>> operands_broadcast_shape(std::span<const Operand> operands) {
  std::vector<int64_t> shape;
  for (const auto& op : operands) {
    if (const auto* t = std::get_if<Tensor>(&op)) {
      auto b = broadcast_shapes(shape, t->sizes());
      if (!b) return std::nullopt;
      shape = std::move(*b);
    }
  }
  return shape;
}

Tensor operand_as(const Operand& operand, ScalarType dtype, const std::vector<int64_t>& sizes) {
  if (const auto* t = std::get_if<Tensor>(&operand)) {
    Tensor typed = t->dtype() == dtype ? *t : converted_copy(*t, dtype);
    return expand_to(typed, sizes);
  }
  const auto& s = std::get<ScalarValue>(operand);
  Tensor scalar = Tensor::empty(dtype, {});
  fill_with(scalar, s);
  return expand_to(scalar, sizes);
}

}  // namespace nrt::exec::cpu
