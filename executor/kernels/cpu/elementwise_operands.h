// The operands of an element-wise kernel read together: each a tensor or a Python scalar, their
// torch result type and their broadcast shape. Failing to broadcast, or a dtype outside the
// kernels' set, is an InvalidArgument error naming the shapes or the dtype.
#pragma once

#include <initializer_list>
#include <string_view>
#include <vector>

#include "executor/kernels/cpu/operand.h"

namespace nrt::exec::cpu {

struct ArgumentRef {
  std::string_view name;
  int position;
};

struct ElementwiseOperands {
  std::vector<Operand> operands;
  ScalarType common = ScalarType::UNKNOWN;  // torch.result_type of the operands
  std::vector<int64_t> shape;               // broadcast shape

  // Operand i converted to `dtype` and expanded to `shape`.
  Tensor as(size_t i, ScalarType dtype) const { return operand_as(operands[i], dtype, shape); }
};

Result<ElementwiseOperands> read_elementwise(const KernelContext& ctx, std::initializer_list<ArgumentRef> arguments);

}  // namespace nrt::exec::cpu
