#include "executor/kernels/cpu/operand.h"

#include <algorithm>
#include <cstring>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
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

template <class T>
void store_element(const ScalarValue& s, void* element) {
  const T v = s.as<T>();
  std::memcpy(element, &v, sizeof(T));
}

}  // namespace

bool ScalarValue::store_as(ScalarType dtype, void* element) const {
  switch (dtype) {
    case ScalarType::FLOAT32: store_element<float>(*this, element); return true;
    case ScalarType::FLOAT64: store_element<double>(*this, element); return true;
    case ScalarType::FLOAT16: store_element<Half>(*this, element); return true;
    case ScalarType::BFLOAT16: store_element<BFloat16>(*this, element); return true;
    case ScalarType::INT8: store_element<int8_t>(*this, element); return true;
    case ScalarType::INT16: store_element<int16_t>(*this, element); return true;
    case ScalarType::INT32: store_element<int32_t>(*this, element); return true;
    case ScalarType::INT64: store_element<int64_t>(*this, element); return true;
    case ScalarType::UINT8: store_element<uint8_t>(*this, element); return true;
    case ScalarType::BOOL: store_element<bool>(*this, element); return true;
    default: return false;
  }
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
    return Operand{t, {}};
  }
  if (auto s = as_scalar(*v)) return Operand{nullptr, *s};
  return ctx.error("argument '" + std::string(name) + "' is neither a tensor nor a number");
}

Result<const Tensor*> read_tensor(const KernelContext& ctx, std::string_view name, int position) {
  const RuntimeValue* v = ctx.find(name, position);
  if (v == nullptr) return ctx.error("missing tensor argument '" + std::string(name) + "'");
  if (const auto* t = std::get_if<Tensor>(v)) return t;
  return ctx.error("argument '" + std::string(name) + "' is not a tensor");
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
  // Tensors of one dtype (the common case) give that dtype whatever their dimensions.
  const Tensor* first = operands.empty() ? nullptr : operands[0].tensor;
  if (first != nullptr && std::ranges::all_of(operands, [first](const Operand& op) {
        return op.tensor != nullptr && op.tensor->dtype() == first->dtype();
      })) {
    return is_kernel_dtype(first->dtype()) ? first->dtype() : ScalarType::UNKNOWN;
  }
  ResultTypeFold fold;
  for (const auto& op : operands) {
    if (op.tensor != nullptr) {
      if (!is_kernel_dtype(op.tensor->dtype())) return ScalarType::UNKNOWN;
      fold.add({op.tensor->dtype(), op.tensor->dim() == 0 ? PromotionClass::kZeroDim : PromotionClass::kTensor});
    } else {
      fold.add({op.scalar.dtype(), PromotionClass::kScalar});
    }
  }
  return fold.result();
}

bool operands_broadcast_shape(std::span<const Operand> operands, DimVector& shape) {
  shape.resize(0);
  for (const auto& op : operands) {
    if (op.tensor != nullptr && !broadcast_into(shape, op.tensor->sizes())) return false;
  }
  return true;
}

}  // namespace nrt::exec::cpu
