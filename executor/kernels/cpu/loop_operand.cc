#include "executor/kernels/cpu/loop_operand.h"

#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/tensor_copy.h"

namespace nrt::exec::cpu {

void LoopOperand::lay_out(const Tensor& source, std::span<const int64_t> shape) {
  const auto element = static_cast<int64_t>(element_size_of(source.dtype()));
  data_ = source.storage()->data() + source.storage_offset() * element;
  const auto& sizes = source.sizes();
  const auto& strides = source.strides();
  const size_t offset = shape.size() - sizes.size();
  byte_strides_.resize_for_overwrite(shape.size());
  int64_t* byte_strides = byte_strides_.data();
  bool dense = true, repeated = true;
  int64_t expected = element;
  for (size_t d = shape.size(); d-- > 0;) {
    const bool own = d >= offset && !(sizes[d - offset] == 1 && shape[d] != 1);
    const int64_t stride = own ? strides[d - offset] * element : 0;
    byte_strides[d] = stride;
    if (shape[d] == 1) continue;
    dense = dense && stride == expected;
    repeated = repeated && stride == 0;
    expected *= shape[d];
  }
  flat_stride_ = dense ? element : repeated ? 0 : -1;
}

LoopOperand LoopOperand::of(const Tensor& t) {
  LoopOperand op;
  op.lay_out(t, t.sizes());
  return op;
}

LoopOperand LoopOperand::broadcast(const Tensor& t, ScalarType dtype, std::span<const int64_t> shape) {
  LoopOperand op;
  if (t.dtype() == dtype) {
    op.lay_out(t, shape);
  } else {
    const Tensor converted = converted_copy(t, dtype);
    op.lay_out(converted, shape);
    op.converted_ = converted.storage();
  }
  return op;
}

LoopOperand LoopOperand::read(const Operand& operand, ScalarType dtype, std::span<const int64_t> shape) {
  if (operand.tensor != nullptr) return broadcast(*operand.tensor, dtype, shape);
  LoopOperand op;
  operand.scalar.store_as(dtype, op.scalar_);
  op.byte_strides_.resize(shape.size(), 0);
  op.flat_stride_ = 0;
  return op;
}

}  // namespace nrt::exec::cpu
