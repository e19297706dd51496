// What the sharding pass's kernels (redistribute_kernel.cc, arg_reduce_kernel.cc) share: the
// process group bound to their group_name argument, and writing a result into output i.
#pragma once

#include <string>
#include <utility>

#include "executor/runtime/kernel.h"
#include "executor/comm/process_group.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::dist {

// The group the executor bound to the `group_name` argument (at `position`).
inline Result<exec::ProcessGroup*> bound_group(const exec::KernelContext& ctx, int position) {
  const exec::RuntimeValue* value = ctx.find("group_name", position);
  const auto* ref = value ? std::get_if<exec::ProcessGroupRef>(value) : nullptr;
  if (ref == nullptr || ref->group == nullptr) {
    return make_error(ErrorCode::CollectiveFailed, std::string(ctx.target()) + ": its process group is not bound");
  }
  return ref->group;
}

// `value` as output `i`: copied into the tensor the executor planned there (which must match it),
// else placed in the slot.
inline Status set_output(exec::KernelContext& ctx, size_t i, exec::Tensor value) {
  exec::RuntimeValue& out = ctx.outputs()[i];
  if (auto* planned = std::get_if<exec::Tensor>(&out); planned != nullptr && planned->defined()) {
    if (planned->sizes() != value.sizes() || planned->dtype() != value.dtype()) {
      return ctx.error("the planned output " + planned->type_string() + " differs from the result " +
                       value.type_string());
    }
    return exec::copy_elements(value, *planned);
  }
  out = std::move(value);
  return {};
}

}  // namespace nrt::dist
