#include "executor/kernels/cpu/elementwise_operands.h"

#include "executor/kernels/cpu/broadcast.h"

namespace nrt::exec::cpu {

Result<ElementwiseOperands> read_elementwise(const KernelContext& ctx, std::initializer_list<ArgumentRef> arguments) {
  ElementwiseOperands result;
  for (const auto& arg : arguments) {
    auto op = read_operand(ctx, arg.name, arg.position);
    if (!op) return op.error();
    result.operands.push_back(std::move(*op));
  }
  auto shape = operands_broadcast_shape(result.operands);
  if (!shape) {
    std::string shapes;
    for (const auto& op : result.operands) {
      if (const auto* t = std::get_if<Tensor>(&op)) shapes += (shapes.empty() ? "" : " and ") + shape_string(t->sizes());
    }
    return ctx.error("shapes " + shapes + " do not broadcast");
  }
  result.shape = std::move(*shape);
  result.common = operands_result_type(result.operands);
  if (result.common == ScalarType::UNKNOWN) return ctx.error("operand dtypes have no common type");
  return result;
}

}  // namespace nrt::exec::cpu
