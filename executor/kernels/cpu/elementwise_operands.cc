#include "executor/kernels/cpu/elementwise_operands.h"

#include <string>

#include "executor/kernels/cpu/broadcast.h"

namespace nrt::exec::cpu {

Status read_elementwise(const KernelContext& ctx, std::initializer_list<ArgumentRef> arguments,
                        ElementwiseOperands& operands) {
  operands.count = 0;
  operands.common = ScalarType::UNKNOWN;
  if (arguments.size() > ElementwiseOperands::kMaxOperands) {
    return ctx.error("an element-wise kernel reads at most " + std::to_string(ElementwiseOperands::kMaxOperands) +
                     " operands");
  }
  for (const auto& arg : arguments) {
    NRT_TRY(op, read_operand(ctx, arg.name, arg.position));
    operands.operand_slots[operands.count++] = *op;
  }
  if (!operands_broadcast_shape(operands.operands(), operands.shape)) {
    std::string shapes;
    for (const auto& op : operands.operands()) {
      if (op.tensor != nullptr) shapes += (shapes.empty() ? "" : " and ") + shape_string(op.tensor->sizes());
    }
    return ctx.error("shapes " + shapes + " do not broadcast");
  }
  operands.common = operands_result_type(operands.operands());
  if (operands.common == ScalarType::UNKNOWN) return ctx.error("operand dtypes have no common type");
  return Status::Ok();
}

}  // namespace nrt::exec::cpu
