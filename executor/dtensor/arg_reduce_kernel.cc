// nrt::sharded_arg_reduce(Tensor self, int dim, bool keepdim, str mode, int offset, str group_name)
// argmax/argmin (one output: indices) and max.dim/min.dim (values, indices) over a dim sharded
// across `group_name`, by the (value, index) exchange of sharded_arg_reduce.h. Inserted by the
// sharding pass in place of the torch op; `offset` is this rank's first global index along `dim`.
#include "executor/dtensor/dtensor_ops.h"
#include "executor/dtensor/kernel_support.h"
#include "executor/dtensor/sharded_arg_reduce.h"

namespace nrt::dist {
namespace {

using exec::KernelContext;

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
  NRT_TRY(group, bound_group(ctx, 5));
  const bool maximum = *mode == "argmax" || *mode == "max";
  NRT_TRY(result, sharded_arg_reduce(*input, *dim, *keepdim, maximum, *offset, **group));
  if (*mode == "argmax" || *mode == "argmin") return set_output(ctx, 0, std::move(result->indices));
  if (ctx.outputs().size() < 2) return ctx.error("max/min give two outputs (values, indices)");
  NRT_RETURN_IF_ERROR(set_output(ctx, 0, std::move(result->values)));
  return set_output(ctx, 1, std::move(result->indices));
}

const exec::KernelRegistration kRegistration{kShardedArgReduceTarget, DeviceKind::kCpu,
                                             {&sharded_arg_reduce_kernel, false}};

}  // namespace
}  // namespace nrt::dist
