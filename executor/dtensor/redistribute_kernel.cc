// nrt::redistribute_step(Tensor input, str from, str to, int[] region, str group_name) -> Tensor
// One step of a planned redistribution (redistribute.h), inserted by the sharding pass: `from`
// and `to` are placements as torch prints them, `region` the sizes of the region the group holds
// together, `group_name` the group of the step's mesh dim (bound by the executor at load).
#include "executor/dtensor/dtensor_ops.h"
#include "executor/dtensor/kernel_support.h"
#include "executor/dtensor/redistribute.h"

namespace nrt::dist {
namespace {

using exec::KernelContext;

Result<Placement> placement_arg(const KernelContext& ctx, std::string_view name, int position) {
  const exec::RuntimeValue* value = ctx.find(name, position);
  const auto* text = value ? std::get_if<std::string>(value) : nullptr;
  if (text == nullptr) return ctx.error("argument '" + std::string(name) + "' must be a placement string");
  auto p = parse_placement(*text);
  if (!p) return ctx.error(p.error().message);
  return p;
}

Status redistribute_step_kernel(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(from, placement_arg(ctx, "from", 1));
  NRT_TRY(to, placement_arg(ctx, "to", 2));
  NRT_TRY(region, ctx.int_list("region", 3));
  NRT_TRY(group, bound_group(ctx, 4));
  NRT_TRY(result, redistribute_step(*input, *from, *to, *region, **group));
  return set_output(ctx, 0, std::move(*result));
}

const exec::KernelRegistration kRegistration{kRedistributeStepTarget, DeviceKind::kCpu,
                                             {&redistribute_step_kernel, false}};

}  // namespace
}  // namespace nrt::dist
