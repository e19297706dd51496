// The operands of an element-wise kernel read together: each a tensor or a Python scalar, their
// torch result type and their broadcast shape. Failing to broadcast, or a dtype outside the
// kernels' set, is a KernelError naming the shapes or the dtype. Reading them copies
// no Tensor and, for up to DimVector::kInline dimensions, allocates nothing.
#pragma once

#include <array>
#include <initializer_list>
#include <span>
#include <string_view>

#include "executor/kernels/cpu/dim_vector.h"
#include "executor/kernels/cpu/loop_operand.h"
#include "executor/kernels/cpu/operand.h"

namespace nrt::exec::cpu {

struct ArgumentRef {
  std::string_view name;
  int position;
};

struct ElementwiseOperands {
  static constexpr size_t kMaxOperands = 3;  // where(condition, self, other)

  std::array<Operand, kMaxOperands> operand_slots;
  size_t count = 0;
  ScalarType common = ScalarType::UNKNOWN;  // torch.result_type of the operands
  DimVector shape;                          // broadcast shape

  std::span<const Operand> operands() const { return {operand_slots.data(), count}; }
  const Operand& operand(size_t i) const { return operand_slots[i]; }
  // Operand i read in `dtype` and broadcast to `shape`.
  LoopOperand as(size_t i, ScalarType dtype) const { return LoopOperand::read(operand_slots[i], dtype, shape); }
};

// Reads at most kMaxOperands arguments into `operands`. An out-parameter rather than a Result:
// moving ElementwiseOperands into and out of a Result costs as much as reading two operands.
Status read_elementwise(const KernelContext& ctx, std::initializer_list<ArgumentRef> arguments,
                        ElementwiseOperands& operands);

}  // namespace nrt::exec::cpu
