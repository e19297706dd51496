// Padding and circular shifts: constant_pad_nd (negative pads crop), pad with mode constant,
// reflect, replicate or circular, and roll. The pad list pairs (before, after) from the last
// dimension backwards, as torch's.
#include <algorithm>
#include <string>
#include <vector>

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/operand.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

struct PadPlan {
  std::vector<int64_t> before, after;  // per dim of self (0 for unpadded dims)
  std::vector<int64_t> out_sizes;
};

Result<PadPlan> plan_pad(const KernelContext& ctx, const Tensor& self, const std::vector<int64_t>& pad) {
  if (pad.size() % 2 != 0) return ctx.error("the pad list must have an even length, got " + std::to_string(pad.size()));
  if (pad.size() / 2 > static_cast<size_t>(self.dim())) {
    return ctx.error("pads " + std::to_string(pad.size() / 2) + " dims, self " + self.type_string() + " has " +
                     std::to_string(self.dim()));
  }
  PadPlan plan;
  plan.before.assign(static_cast<size_t>(self.dim()), 0);
  plan.after.assign(static_cast<size_t>(self.dim()), 0);
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    const size_t d = static_cast<size_t>(self.dim()) - 1 - k;
    plan.before[d] = pad[2 * k];
    plan.after[d] = pad[2 * k + 1];
  }
  for (size_t d = 0; d < plan.before.size(); ++d) {
    const int64_t size = self.sizes()[d] + plan.before[d] + plan.after[d];
    if (size < 0) return ctx.error("padding gives dim " + std::to_string(d) + " the negative size " + std::to_string(size));
    plan.out_sizes.push_back(size);
  }
  return plan;
}

// Fills `out` with `value` and copies the part of self that survives the (possibly negative) pads.
Status constant_pad_into(const Tensor& self, const PadPlan& plan, const Tensor& out, const ScalarValue& value) {
  fill_with(out, value);
  Tensor from = self, to = out;
  for (size_t d = 0; d < plan.before.size(); ++d) {
    const auto dim = static_cast<int64_t>(d);
    const int64_t crop_before = std::max<int64_t>(-plan.before[d], 0), crop_after = std::max<int64_t>(-plan.after[d], 0);
    const int64_t kept = self.sizes()[d] - crop_before - crop_after;
    if (kept <= 0) return Status::Ok();  // nothing of self survives: all padding
    from = narrow_view(from, dim, crop_before, kept);
    to = narrow_view(to, dim, std::max<int64_t>(plan.before[d], 0), kept);
  }
  copy_into(to, from);
  return Status::Ok();
}

// The source index of output index `o` along a dim of `n` elements padded by `before`.
enum class PadMode { kReflect, kReplicate, kCircular };
int64_t source_index(PadMode mode, int64_t o, int64_t before, int64_t n) {
  int64_t i = o - before;
  switch (mode) {
    case PadMode::kReflect:
      if (i < 0) i = -i;
      if (i >= n) i = 2 * (n - 1) - i;
      return i;
    case PadMode::kReplicate:
      return std::clamp<int64_t>(i, 0, n - 1);
    case PadMode::kCircular:
      return ((i % n) + n) % n;
  }
  return i;
}

// Pads one dim at a time (slice copies along that dim): reflect, replicate, circular.
Status index_pad_into(KernelContext& ctx, const Tensor& self, const PadPlan& plan, const Tensor& out, PadMode mode) {
  Tensor current = self;
  for (size_t d = 0; d < plan.before.size(); ++d) {
    if (plan.before[d] == 0 && plan.after[d] == 0) continue;
    const auto dim = static_cast<int64_t>(d);
    const int64_t n = current.sizes()[d];
    if (plan.before[d] < 0 || plan.after[d] < 0) return ctx.error("negative pads are only for constant mode");
    if (n == 0) return ctx.error("cannot pad an empty dim in this mode");
    if (mode == PadMode::kReflect && (plan.before[d] >= n || plan.after[d] >= n)) {
      return ctx.error("reflect padding must be smaller than the dim it pads (" + std::to_string(n) + ")");
    }
    if (mode == PadMode::kCircular && (plan.before[d] > n || plan.after[d] > n)) {
      return ctx.error("circular padding may wrap at most once around the dim it pads (" + std::to_string(n) + ")");
    }
    std::vector<int64_t> sizes = current.sizes();
    sizes[d] = plan.out_sizes[d];
    Tensor next = Tensor::empty(current.dtype(), sizes, current.device());
    for (int64_t o = 0; o < plan.out_sizes[d]; ++o) {
      copy_into(narrow_view(next, dim, o, 1), narrow_view(current, dim, source_index(mode, o, plan.before[d], n), 1));
    }
    current = std::move(next);
  }
  copy_into(out, current);
  return Status::Ok();
}

// constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0)
Status constant_pad_nd(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  NRT_TRY(pad, ctx.int_list("pad", 1));
  NRT_TRY(value, read_scalar(ctx, "value", 2, ScalarValue::of_int(0)));
  NRT_TRY(plan, plan_pad(ctx, *self, *pad));
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), plan->out_sizes));
  return constant_pad_into(*self, *plan, *out, *value);
}

// pad(Tensor self, SymInt[] pad, str mode="constant", float? value=None)
Status pad(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (!is_kernel_dtype(self->dtype())) return unsupported_dtype(ctx, self->dtype());
  NRT_TRY(pad_list, ctx.int_list("pad", 1));
  NRT_TRY(mode, read_optional_string(ctx, "mode", 2));
  NRT_TRY(value, read_optional_scalar(ctx, "value", 3));
  NRT_TRY(plan, plan_pad(ctx, *self, *pad_list));
  const std::string name = mode->value_or("constant");
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), plan->out_sizes));
  if (name == "constant") return constant_pad_into(*self, *plan, *out, value->value_or(ScalarValue::of_int(0)));
  if (value->has_value()) return ctx.error("a fill value applies to constant padding only, mode is '" + name + "'");
  if (name == "reflect") return index_pad_into(ctx, *self, *plan, *out, PadMode::kReflect);
  if (name == "replicate") return index_pad_into(ctx, *self, *plan, *out, PadMode::kReplicate);
  if (name == "circular") return index_pad_into(ctx, *self, *plan, *out, PadMode::kCircular);
  return ctx.error("mode must be 'constant', 'reflect', 'replicate' or 'circular', got '" + name + "'");
}

// roll(Tensor self, SymInt[1] shifts, int[1] dims=[]): without dims, over the flattened tensor.
Status roll(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(shifts, ctx.int_list("shifts", 1));
  NRT_TRY(dims, ctx.int_list("dims", 2, std::vector<int64_t>{}));
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), self->sizes()));
  Tensor current = *self;
  std::vector<int64_t> roll_dims = *dims;
  const bool flattened = roll_dims.empty();
  if (flattened) {
    if (shifts->size() != 1) return ctx.error("without dims, shifts must hold one value");
    current = contiguous_as(*self, self->dtype());
    current = current.as_strided({current.numel()}, {1}, current.storage_offset());
    roll_dims = {0};
  } else if (roll_dims.size() != shifts->size()) {
    return ctx.error("shifts and dims must have the same length, got " + std::to_string(shifts->size()) + " and " +
                     std::to_string(roll_dims.size()));
  }
  for (size_t k = 0; k < roll_dims.size(); ++k) {
    NRT_TRY(dim, wrap_dim(ctx, roll_dims[k], current.dim()));
    const int64_t n = current.sizes()[static_cast<size_t>(*dim)];
    if (n == 0) continue;
    const int64_t shift = (((*shifts)[k] % n) + n) % n;
    Tensor next = Tensor::empty(current.dtype(), current.sizes(), current.device());
    // out[(i + shift) % n] = in[i]: two slice copies.
    copy_into(narrow_view(next, *dim, shift, n - shift), narrow_view(current, *dim, 0, n - shift));
    copy_into(narrow_view(next, *dim, 0, shift), narrow_view(current, *dim, n - shift, shift));
    current = std::move(next);
  }
  // Flattened, `current` is contiguous: viewed back in self's shape.
  copy_into(*out, flattened ? current.as_strided(self->sizes(), Tensor::contiguous_strides(self->sizes()),
                                                 current.storage_offset())
                            : current);
  return Status::Ok();
}

// Fills and slice copies, through the device's strided copy off the host: these serve CUDA too.
const NamedKernel kPaddingKernels[] = {
    {"aten::constant_pad_nd.default", {&constant_pad_nd, false}},
    {"aten::pad.default", {&pad, false}},
    {"aten::roll.default", {&roll, false}},
};
const bool kPaddingKernelsRegistered = register_for_devices(kPaddingKernels, {DeviceKind::kCpu, DeviceKind::kCuda});

}  // namespace
}  // namespace nrt::exec::cpu
