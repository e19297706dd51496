// Copies that may change dtype: _to_copy and the `to` overloads (always a fresh tensor, never an
// alias of the input), clone, lift_fresh_copy, copy (src broadcast into self's shape and dtype),
// repeat and repeat_interleave (tiling and repeating slices), and native_dropout in inference (a
// copy and an all-true mask). Layout, device and memory-format arguments are accepted and
// ignored: CPU tensors here are always strided, and contiguous outputs are always valid.
#include <algorithm>
#include <variant>

#include "executor/kernels/cpu/seeded_draws.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

Status copy_as(KernelContext& ctx, const Tensor& self, ScalarType dtype) {
  if (dtype != self.dtype() && (!is_kernel_dtype(dtype) || !is_kernel_dtype(self.dtype()))) {
    return ctx.error("conversion from " + std::string(short_name(self.dtype())) + " to " +
                     std::string(short_name(dtype)) + " is not supported");
  }
  NRT_TRY(out, bind_output(ctx, 0, dtype, self.sizes()));
  copy_into(*out, self);
  return Status::Ok();
}

// _to_copy(Tensor self, *, ScalarType? dtype, ...) and to.dtype_layout(Tensor self, *, dtype, ...).
Status to_copy(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 1));
  return copy_as(ctx, *self, dtype->value_or(self->dtype()));
}

// to.dtype(Tensor self, ScalarType dtype, ...).
Status to_dtype(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 1));
  return copy_as(ctx, *self, dtype->value_or(self->dtype()));
}

// to.device(Tensor self, Device device, ScalarType dtype, ...).
Status to_device(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dtype, ctx.scalar_type("dtype", 2));
  return copy_as(ctx, *self, dtype->value_or(self->dtype()));
}

// to.other(Tensor self, Tensor other, ...): other's dtype.
Status to_other(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(other, ctx.tensor("other", 1));
  return copy_as(ctx, *self, other->dtype());
}

Status clone(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  return copy_as(ctx, *self, self->dtype());
}

// copy(Tensor self, Tensor src, bool non_blocking=False): src's values in self's shape and dtype.
Status copy(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(src, ctx.tensor("src", 1));
  if (!broadcasts_to(src->sizes(), self->sizes())) {
    return ctx.error("src " + shape_string(src->sizes()) + " does not broadcast to " + shape_string(self->sizes()));
  }
  if (src->dtype() != self->dtype() && (!is_kernel_dtype(src->dtype()) || !is_kernel_dtype(self->dtype()))) {
    return ctx.error("conversion from " + std::string(short_name(src->dtype())) + " to " +
                     std::string(short_name(self->dtype())) + " is not supported");
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), self->sizes()));
  copy_into(*out, expand_to(*src, self->sizes()));
  return Status::Ok();
}

// `t` with dimension `dim` reversed, into a new contiguous tensor: one slice copy per index
// (views keep non-negative strides).
Tensor flipped(const Tensor& t, int64_t dim) {
  Tensor out = Tensor::empty(t.dtype(), t.sizes(), t.device());
  const int64_t n = t.size(dim);
  for (int64_t i = 0; i < n; ++i) copy_into(narrow_view(out, dim, i, 1), narrow_view(t, dim, n - 1 - i, 1));
  return out;
}

// flip(Tensor self, int[] dims): a copy with each listed dim reversed.
Status flip(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dims, ctx.int_list("dims", 1));
  std::vector<bool> seen(static_cast<size_t>(self->dim()), false);
  Tensor result = *self;
  for (int64_t d : *dims) {
    NRT_TRY(dim, wrap_dim(ctx, d, self->dim()));
    if (seen[static_cast<size_t>(*dim)]) return ctx.error("dim " + std::to_string(d) + " appears twice in dims");
    seen[static_cast<size_t>(*dim)] = true;
    if (self->numel() > 0) result = flipped(result, *dim);
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), self->sizes()));
  copy_into(*out, result);
  return Status::Ok();
}

// type_as(Tensor self, Tensor other): self's values in other's dtype.
Status type_as(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(other, ctx.tensor("other", 1));
  return copy_as(ctx, *self, other->dtype());
}

// Writes `spread` (a view of an input) into `out`, whose contiguous layout splits each of its dims
// into dims of spread's sizes (repeat, repeat_interleave).
void write_split(const Tensor& out, const Tensor& spread) {
  const Tensor dense = out.is_contiguous() ? out : Tensor::empty(out.dtype(), out.sizes(), out.device());
  copy_into(dense.as_strided(spread.sizes(), Tensor::contiguous_strides(spread.sizes()), dense.storage_offset()),
            spread);
  if (!out.is_contiguous()) copy_into(out, dense);
}

// repeat(Tensor self, SymInt[] repeats): self tiled; repeats may add leading dims (as torch).
Status repeat(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(repeats, ctx.int_list("repeats", 1));
  const size_t rank = repeats->size();
  if (rank < static_cast<size_t>(self->dim())) {
    return ctx.error("repeats has " + std::to_string(rank) + " entries, fewer than the " +
                     std::to_string(self->dim()) + " dims of self");
  }
  // self viewed with leading 1s, then as [1, s0, 1, s1, ...] expanded to [r0, s0, r1, s1, ...].
  std::vector<int64_t> sizes(rank - static_cast<size_t>(self->dim()), 1), strides(sizes.size(), 0);
  sizes.insert(sizes.end(), self->sizes().begin(), self->sizes().end());
  strides.insert(strides.end(), self->strides().begin(), self->strides().end());
  std::vector<int64_t> tiled_sizes, tiled_strides, out_sizes;
  for (size_t d = 0; d < rank; ++d) {
    const int64_t r = (*repeats)[d];
    if (r < 0) return ctx.error("repeats must be non-negative, got " + std::to_string(r));
    tiled_sizes.insert(tiled_sizes.end(), {r, sizes[d]});
    tiled_strides.insert(tiled_strides.end(), {0, strides[d]});
    out_sizes.push_back(r * sizes[d]);
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), out_sizes));
  if (out->numel() == 0) return Status::Ok();
  // The output seen as [r0, s0, r1, s1, ...]: each pair of dims splits one dim.
  write_split(*out, self->as_strided(tiled_sizes, tiled_strides, self->storage_offset()));
  return Status::Ok();
}

// repeat_interleave.self_int(Tensor self, SymInt repeats, int? dim=None, *, SymInt? output_size=None):
// each slice along dim (dim None: each element of self flattened) `repeats` times in a row. self is
// viewed with a stride-0 dim of `repeats` after dim, which the contiguous output splits.
Status repeat_interleave(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(repeats, ctx.int64("repeats", 1));
  if (*repeats < 0) return ctx.error("repeats must be non-negative, got " + std::to_string(*repeats));
  const RuntimeValue* dim_value = ctx.find("dim", 2);
  Tensor source = *self;
  int64_t dim = 0;
  if (dim_value == nullptr || std::holds_alternative<std::monostate>(*dim_value)) {
    source = self->is_contiguous() ? *self : contiguous_as(*self, self->dtype());
    source = source.as_strided({source.numel()}, {1}, source.storage_offset());
  } else {
    NRT_TRY(d, ctx.int64("dim", 2));
    NRT_TRY(wrapped, wrap_dim(ctx, *d, std::max<int64_t>(self->dim(), 1)));
    dim = *wrapped;
    if (self->dim() == 0) source = self->as_strided({1}, {1}, self->storage_offset());
  }
  std::vector<int64_t> sizes = source.sizes(), strides = source.strides();
  std::vector<int64_t> out_sizes = sizes;
  out_sizes[static_cast<size_t>(dim)] *= *repeats;
  NRT_TRY(output_size, ctx.int64("output_size", 3, out_sizes[static_cast<size_t>(dim)]));
  if (*output_size != out_sizes[static_cast<size_t>(dim)]) {
    return ctx.error("output_size " + std::to_string(*output_size) + " is not " +
                     std::to_string(out_sizes[static_cast<size_t>(dim)]));
  }
  NRT_TRY(out, bind_output(ctx, 0, self->dtype(), out_sizes));
  if (out->numel() == 0) return Status::Ok();
  sizes.insert(sizes.begin() + dim + 1, *repeats);
  strides.insert(strides.begin() + dim + 1, 0);
  write_split(*out, source.as_strided(sizes, strides, source.storage_offset()));
  return Status::Ok();
}

// native_dropout(Tensor input, float p, bool? train) -> (Tensor, Tensor mask)
Status native_dropout(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(p, ctx.real("p", 1));
  NRT_TRY(train, ctx.boolean("train", 2, false));
  if (*train && *p > 0.0) return dropout_in_training(ctx, *input, *p, true);
  if (auto s = copy_as(ctx, *input, input->dtype()); !s.ok()) return s;
  NRT_TRY(mask, OutputSlot::bind_secondary(ctx, 1, ScalarType::BOOL, input->sizes()));
  fill_with(mask->tensor(), ScalarValue::of_bool(true));
  return Status::Ok();
}

// The copies and conversions go through copy_into, which moves elements on a device through its
// strided copy (executor/runtime/tensor_copy.h): these serve CUDA too (flip as one slice copy per
// flipped index, a first version there).
const NamedKernel kCopyKernels[] = {
    {"aten::_to_copy.default", {&to_copy, false}},
    {"aten::to.dtype", {&to_dtype, false}},
    {"aten::to.dtype_layout", {&to_copy, false}},
    {"aten::to.device", {&to_device, false}},
    {"aten::to.other", {&to_other, false}},
    {"aten::clone.default", {&clone, false}},
    {"aten::lift_fresh_copy.default", {&clone, false}},
    {"aten::copy.default", {&copy, false}},
    {"aten::flip.default", {&flip, false}},
    {"aten::type_as.default", {&type_as, false}},
    {"aten::repeat.default", {&repeat, false}},
};
const bool kCopyKernelsRegistered = register_for_devices(kCopyKernels, {DeviceKind::kCpu, DeviceKind::kCuda});
// These fill or read on the host.
const KernelRegistration kHostOnly[] = {
    {"aten::repeat_interleave.self_int", DeviceKind::kCpu, {&repeat_interleave, false}},
    {"aten::native_dropout.default", DeviceKind::kCpu, {&native_dropout, false}},
};

}  // namespace
}  // namespace nrt::exec::cpu
