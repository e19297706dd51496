// nrt::from_local(Tensor? local) -> Tensor? and nrt::to_local(Tensor? self) -> Tensor?: where a
// program moves between a rank's local tensor and a DTensor (torch's DTensor.from_local and
// to_local). The sharding pass gives the output this rank's shard sizes (sharding_pass.h), so both
// are a copy into the planned output; a local tensor of other sizes than the rank's shard is
// refused, naming both. An absent (None) tensor passes through as None: nothing is invented.
// torch's export::access_subclass_inner_tensor(src, "_local_tensor") (what a per-rank archive's
// `dtensor.to_local()` exports to) is to_local; on a plain tensor it is that tensor.
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

Status access_inner_tensor_kernel(KernelContext& ctx) {
  const exec::RuntimeValue* attr_value = ctx.find("attr", 1);
  const auto* attr = attr_value ? std::get_if<std::string>(attr_value) : nullptr;
  if (attr == nullptr || *attr != "_local_tensor") {
    return ctx.error("inner tensor '" + (attr ? *attr : std::string("?")) +
                     "' of a tensor subclass; nrt reads a DTensor's '_local_tensor'");
  }
  NRT_TRY(input, ctx.tensor("src_subclass_tensor", 0));
  if (const auto* planned = std::get_if<exec::Tensor>(&ctx.outputs()[0]); planned && planned->defined()) {
    if (planned->sizes() != input->sizes() || planned->dtype() != input->dtype()) {
      return ctx.error("the local tensor is " + input->type_string() + " but this rank's shard is " +
                       planned->type_string());
    }
  }
  return set_output(ctx, 0, *input);
}

const exec::KernelRegistration kFromLocal{kFromLocalTarget, DeviceKind::kCpu, {&local_tensor_kernel, false}};
const exec::KernelRegistration kToLocal{kToLocalTarget, DeviceKind::kCpu, {&local_tensor_kernel, false}};
const exec::KernelRegistration kAccessInnerTensor{kAccessInnerTensorTarget, DeviceKind::kCpu,
                                                  {&access_inner_tensor_kernel, false}};

}  // namespace
}  // namespace nrt::dist
