// nrt::sharded_arg_reduce(Tensor self, int dim, bool keepdim, str mode, int offset, str group_name)
// argmax/argmin (one output: indices) and max.dim/min.dim (values, indices) over a dim sharded
// across `group_name`, by the (value, index) exchange of sharded_arg_reduce.h. Inserted by the
// sharding pass in place of the torch op; `offset` is this rank's first global index along `dim`.
#include "executor/distributed/sharded_arg_reduce.h"
#include "executor/kernel.h"
#include "executor/tensor_copy.h"

namespace nrt::dist {
namespace {

using exec::KernelContext;

Status set_output(KernelContext& ctx, size_t i, exec::Tensor value) {
  exec::RuntimeValue& out = ctx.outputs()[i];
  if (auto* planned = std::get_if<exec::Tensor>(&out); planned != nullptr && planned->defined()) {
    if (planned->sizes() != value.sizes() || planned->dtype() != value.dtype()) {
      return ctx.error("the planned output " + planned->type_string() + " differs from " + value.type_string());
    }
    return exec::copy_elements(value, *planned);
  }
  out = std::move(value);
  return {};
}

Status sharded_arg_reduce_kernel(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(keepdim, ctx.boolean("keepdim", 2, false));
  NRT_TRY(offset, ctx.int64("offset", 4));
  const exec::RuntimeValue* mode_value = ctx.find("mode", 3);
  const auto* mode = mode_value ? std::get_if<std::string>(mode_value) : nullptr;
  if (mode == nullptr || (*mode != "argmax" && *mode != "argmin" && *mode != "max" && *mode != "min")) {
    return ctx.error("argument 'mode' must be argmax, argmin, max or min");
  }
  const exec::RuntimeValue* group_value = ctx.find("group_name", 5);
  const auto* ref = group_value ? std::get_if<exec::ProcessGroupRef>(group_value) : nullptr;
  if (ref == nullptr || ref->group == nullptr) {
    return make_error(ErrorCode::CollectiveFailed, std::string(ctx.target()) + ": its process group is not bound");
  }
  const bool maximum = *mode == "argmax" || *mode == "max";
  NRT_TRY(result, sharded_arg_reduce(*input, *dim, *keepdim, maximum, *offset, *ref->group));
  if (*mode == "argmax" || *mode == "argmin") return set_output(ctx, 0, std::move(result->indices));
  if (ctx.outputs().size() < 2) return ctx.error("max/min give two outputs (values, indices)");
  NRT_RETURN_IF_ERROR(set_output(ctx, 0, std::move(result->values)));
  return set_output(ctx, 1, std::move(result->indices));
}

const exec::KernelRegistration kRegistration{
    "nrt::sharded_arg_reduce.default", DeviceKind::kCpu, {&sharded_arg_reduce_kernel, false}};

}  // namespace
}  // namespace nrt::dist
