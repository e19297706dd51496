// A torch.export node target string and nrt's Operator (qualified name + overload), both ways.
//
//   "torch.ops.aten.add.Tensor"     <-> {"aten::add", "Tensor"}
//   "torch.ops.higher_order.cond"   <-> {"higher_order::cond", ""}
//   "_operator.getitem"             <-> {"_operator.getitem", ""}   (Python callables, verbatim)
//
// A name containing "::" is always an op namespace, so the mapping is a bijection on the targets
// it accepts; a verbatim target containing "::" or an empty one is refused.
#pragma once

#include <string>
#include <string_view>

#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::torch_export {

Result<fb::OperatorT> operator_from_target(std::string_view target);
Result<std::string> target_from_operator(const fb::OperatorT& op);

}  // namespace nrt::torch_export
