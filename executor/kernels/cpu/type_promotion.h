// torch's type promotion for the dtypes the CPU kernels compute on.
//
// promote_types is torch.promote_types (bool < integers < floating; uint8 with int8 gives int16;
// float16 with bfloat16 gives float32). result_type is torch.result_type: operands form three
// priority classes (tensors with dimensions, 0-d tensors, Python scalars); a lower class changes
// the result only when its category is higher (an int tensor plus a Python float gives float32, a
// float16 tensor plus a Python float stays float16, an int32 tensor plus an int64 0-d tensor stays
// int32). Python scalars count as int64, float32 (the default dtype) and bool.
#pragma once

#include <span>

#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// UNKNOWN when either dtype is outside the kernels' set (complex, float8, quantized, ...).
ScalarType promote_types(ScalarType a, ScalarType b);

enum class PromotionClass { kTensor, kZeroDim, kScalar };

struct PromotionOperand {
  ScalarType dtype;
  PromotionClass priority;
};

ScalarType result_type(std::span<const PromotionOperand> operands);

// result_type folded one operand at a time, for callers that have no list of operands at hand.
class ResultTypeFold {
 public:
  void add(PromotionOperand operand);
  ScalarType result() const;

 private:
  ScalarType by_class_[3] = {ScalarType::UNKNOWN, ScalarType::UNKNOWN, ScalarType::UNKNOWN};
};

}  // namespace nrt::exec::cpu
