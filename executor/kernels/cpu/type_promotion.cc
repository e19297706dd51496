#include "executor/kernels/cpu/type_promotion.h"

#include "executor/kernels/cpu/dtype_dispatch.h"

namespace nrt::exec::cpu {
namespace {

int integral_rank(ScalarType t) {
  switch (t) {
    case ScalarType::INT8: return 1;
    case ScalarType::INT16: return 2;
    case ScalarType::INT32: return 3;
    case ScalarType::INT64: return 4;
    default: return 0;
  }
}

int floating_rank(ScalarType t) {
  switch (t) {
    case ScalarType::FLOAT16:
    case ScalarType::BFLOAT16: return 1;
    case ScalarType::FLOAT32: return 2;
    case ScalarType::FLOAT64: return 3;
    default: return 0;
  }
}

// The undefined-aware promotion result_type's combination uses.
ScalarType promote_defined(ScalarType a, ScalarType b) {
  if (a == ScalarType::UNKNOWN) return b;
  if (b == ScalarType::UNKNOWN) return a;
  return promote_types(a, b);
}

ScalarType combine_categories(ScalarType higher, ScalarType lower) {
  if (is_floating_dtype(higher)) return higher;
  if (higher == ScalarType::BOOL || is_floating_dtype(lower)) return promote_defined(higher, lower);
  if (higher != ScalarType::UNKNOWN) return higher;
  return lower;
}

}  // namespace

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (!is_kernel_dtype(a) || !is_kernel_dtype(b)) return ScalarType::UNKNOWN;
  if (a == b) return a;
  if (a == ScalarType::BOOL) return b;
  if (b == ScalarType::BOOL) return a;
  const bool af = is_floating_dtype(a), bf = is_floating_dtype(b);
  if (af && bf) {
    if (floating_rank(a) == floating_rank(b)) return ScalarType::FLOAT32;  // float16 with bfloat16
    return floating_rank(a) > floating_rank(b) ? a : b;
  }
  if (af) return a;
  if (bf) return b;
  // Both integral.
  if (a == ScalarType::UINT8) return b == ScalarType::INT8 ? ScalarType::INT16 : b;
  if (b == ScalarType::UINT8) return a == ScalarType::INT8 ? ScalarType::INT16 : a;
  return integral_rank(a) > integral_rank(b) ? a : b;
}

void ResultTypeFold::add(PromotionOperand operand) {
  auto& slot = by_class_[static_cast<int>(operand.priority)];
  slot = promote_defined(slot, operand.dtype);
}

ScalarType ResultTypeFold::result() const {
  return combine_categories(by_class_[0], combine_categories(by_class_[1], by_class_[2]));
}

ScalarType result_type(std::span<const PromotionOperand> operands) {
  ResultTypeFold fold;
  for (const auto& op : operands) fold.add(op);
  return fold.result();
}

}  // namespace nrt::exec::cpu
