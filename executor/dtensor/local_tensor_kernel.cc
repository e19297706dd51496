// nrt::from_local(Tensor? local) -> Tensor? and nrt::to_local(Tensor? self) -> Tensor?: where a
// program moves between a rank's local tensor and a DTensor (torch's DTensor.from_local and
// to_local). The sharding pass gives the output this rank's shard sizes (sharding_pass.h), so both
// are a copy into the planned output; a local tensor of other sizes than the rank's shard is
// refused, naming both. An absent (None) tensor passes through as None: nothing is invented.
#include "executor/dtensor/dtensor_ops.h"
#include "executor/dtensor/kernel_support.h"

namespace nrt::dist {
namespace {

using exec::KernelContext;

Status local_tensor_kernel(KernelContext& ctx) {
  NRT_TRY(input, ctx.optional_tensor(ctx.target() == kFromLocalTarget ? "local" : "self", 0));
  if (!input->has_value()) {
    ctx.outputs()[0] = exec::RuntimeValue{};
    return {};
  }
  const exec::Tensor& given = **input;
  if (const auto* planned = std::get_if<exec::Tensor>(&ctx.outputs()[0]); planned && planned->defined()) {
    if (planned->sizes() != given.sizes() || planned->dtype() != given.dtype()) {
      return ctx.error("the local tensor is " + given.type_string() + " but this rank's shard is " +
                       planned->type_string());
    }
  }
  return set_output(ctx, 0, given);
}

const exec::KernelRegistration kFromLocal{kFromLocalTarget, DeviceKind::kCpu, {&local_tensor_kernel, false}};
const exec::KernelRegistration kToLocal{kToLocalTarget, DeviceKind::kCpu, {&local_tensor_kernel, false}};

}  // namespace
}  // namespace nrt::dist
