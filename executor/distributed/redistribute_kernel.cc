// nrt::redistribute_step(Tensor input, str from, str to, int[] region, str group_name) -> Tensor
// One step of a planned redistribution (redistribute.h), inserted by the sharding pass: `from`
// and `to` are placements as torch prints them, `region` the sizes of the region the group holds
// together, `group_name` the group of the step's mesh dim (bound by the executor at load).
#include "executor/distributed/redistribute.h"
#include "executor/kernel.h"
#include "executor/tensor_copy.h"

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
  const exec::RuntimeValue* value = ctx.find("group_name", 4);
  const auto* ref = value ? std::get_if<exec::ProcessGroupRef>(value) : nullptr;
  if (ref == nullptr || ref->group == nullptr) {
    return make_error(ErrorCode::CollectiveFailed,
                      std::string(ctx.target()) + ": its process group is not bound in this process");
  }
  NRT_TRY(result, redistribute_step(*input, *from, *to, *region, *ref->group));
  exec::RuntimeValue& out = ctx.outputs()[0];
  if (auto* planned = std::get_if<exec::Tensor>(&out); planned != nullptr && planned->defined()) {
    if (planned->sizes() != result->sizes() || planned->dtype() != result->dtype()) {
      return ctx.error("the planned output " + planned->type_string() + " differs from the step's " +
                       result->type_string());
    }
    return exec::copy_elements(*result, *planned);
  }
  out = std::move(*result);
  return {};
}

const exec::KernelRegistration kRegistration{
    "nrt::redistribute_step.default", DeviceKind::kCpu, {&redistribute_step_kernel, false}};

}  // namespace
}  // namespace nrt::dist
