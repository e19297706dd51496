// Shape kernels that return views sharing the input's storage (registered with is_view):
// view, permute, transpose, t, expand, unsqueeze, squeeze, slice, select, narrow, unflatten, alias,
// detach, dropout in inference.
//
// reshape, _unsafe_view, flatten and contiguous return a view when the layout allows and a fresh
// contiguous copy otherwise (as torch does). They are registered as views too: the planner then
// treats the output as possibly aliasing the input (keeping the input alive as long as the
// output), which is correct in both cases; the copying branch allocates its own storage.
#include <algorithm>

#include "executor/kernels/cpu/seeded_draws.h"
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/view_strides.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cpu {
namespace {

// A contiguous copy where `t` lives: these kernels serve every device (below), and off the host
// the device's strided copy moves the elements (executor/runtime/tensor_copy.h).
Tensor copy_on_device(const Tensor& t) {
  return t.device().kind == DeviceKind::kCpu ? converted_copy(t, t.dtype()) : exec::contiguous_copy(t);
}

Status view_or_copy(KernelContext& ctx, const Tensor& self, const std::vector<int64_t>& requested, bool may_copy) {
  NRT_TRY(sizes, infer_view_sizes(ctx, requested, self.numel()));
  if (auto strides = view_strides(self.sizes(), self.strides(), *sizes)) {
    return set_output(ctx, 0, self.as_strided(*sizes, *strides, self.storage_offset()));
  }
  if (!may_copy) {
    return ctx.error("shape " + shape_string(*sizes) + " is not compatible with the input's sizes " +
                     shape_string(self.sizes()) + " and strides; use reshape");
  }
  Tensor copy = copy_on_device(self);
  return set_output(ctx, 0, copy.as_strided(*sizes, Tensor::contiguous_strides(*sizes), 0));
}

// view(Tensor self, SymInt[] size); _unsafe_view(Tensor self, SymInt[] size); reshape(Tensor self, SymInt[] shape)
Status view(KernelContext& ctx, std::string_view size_name, bool may_copy) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(size, ctx.int_list(size_name, 1));
  return view_or_copy(ctx, *self, *size, may_copy);
}

// view_as(Tensor self, Tensor other): self viewed with other's sizes.
Status view_as(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(other, ctx.tensor("other", 1));
  return view_or_copy(ctx, *self, std::vector<int64_t>(other->sizes().begin(), other->sizes().end()), false);
}

// flatten.using_ints(Tensor self, int start_dim=0, int end_dim=-1)
Status flatten(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(start, ctx.int64("start_dim", 1, 0));
  NRT_TRY(end, ctx.int64("end_dim", 2, -1));
  if (self->dim() == 0) return view_or_copy(ctx, *self, {1}, true);
  NRT_TRY(s, wrap_dim(ctx, *start, self->dim()));
  NRT_TRY(e, wrap_dim(ctx, *end, self->dim()));
  if (*s > *e) return ctx.error("start_dim must not come after end_dim");
  if (*s == *e) return set_output(ctx, 0, *self);
  std::vector<int64_t> sizes(self->sizes().begin(), self->sizes().begin() + *s);
  int64_t merged = 1;
  for (int64_t d = *s; d <= *e; ++d) merged *= self->sizes()[static_cast<size_t>(d)];
  sizes.push_back(merged);
  sizes.insert(sizes.end(), self->sizes().begin() + *e + 1, self->sizes().end());
  return view_or_copy(ctx, *self, sizes, true);
}

// unflatten.int(Tensor self, int dim, SymInt[] sizes)
Status unflatten(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(parts, ctx.int_list("sizes", 2));
  if (self->dim() == 0) return ctx.error("cannot unflatten a 0-d tensor");
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  NRT_TRY(inferred, infer_view_sizes(ctx, *parts, self->sizes()[static_cast<size_t>(*d)]));
  std::vector<int64_t> sizes(self->sizes().begin(), self->sizes().begin() + *d);
  sizes.insert(sizes.end(), inferred->begin(), inferred->end());
  sizes.insert(sizes.end(), self->sizes().begin() + *d + 1, self->sizes().end());
  return view_or_copy(ctx, *self, sizes, false);
}

Status contiguous(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  return set_output(ctx, 0, self->is_contiguous() ? *self : copy_on_device(*self));
}

// permute(Tensor self, int[] dims)
Status permute(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dims, ctx.int_list("dims", 1));
  if (static_cast<int64_t>(dims->size()) != self->dim()) {
    return ctx.error("dims " + shape_string(*dims) + " do not match the input's rank " + std::to_string(self->dim()));
  }
  std::vector<int64_t> sizes, strides;
  std::vector<bool> seen(dims->size(), false);
  for (int64_t d : *dims) {
    NRT_TRY(w, wrap_dim(ctx, d, self->dim()));
    const auto i = static_cast<size_t>(*w);
    if (seen[i]) return ctx.error("dims " + shape_string(*dims) + " repeat a dimension");
    seen[i] = true;
    sizes.push_back(self->sizes()[i]);
    strides.push_back(self->strides()[i]);
  }
  return set_output(ctx, 0, self->as_strided(sizes, strides, self->storage_offset()));
}

Status transpose_dims(KernelContext& ctx, const Tensor& self, int64_t dim0, int64_t dim1) {
  NRT_TRY(a, wrap_dim(ctx, dim0, self.dim()));
  NRT_TRY(b, wrap_dim(ctx, dim1, self.dim()));
  if (self.dim() == 0) return set_output(ctx, 0, self);
  std::vector<int64_t> sizes = self.sizes(), strides = self.strides();
  std::swap(sizes[static_cast<size_t>(*a)], sizes[static_cast<size_t>(*b)]);
  std::swap(strides[static_cast<size_t>(*a)], strides[static_cast<size_t>(*b)]);
  return set_output(ctx, 0, self.as_strided(sizes, strides, self.storage_offset()));
}

// transpose.int(Tensor self, int dim0, int dim1)
Status transpose(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim0, ctx.int64("dim0", 1));
  NRT_TRY(dim1, ctx.int64("dim1", 2));
  return transpose_dims(ctx, *self, *dim0, *dim1);
}

// swapaxes(Tensor(a) self, int axis0, int axis1): NumPy's name for transpose.
Status swapaxes(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(axis0, ctx.int64("axis0", 1));
  NRT_TRY(axis1, ctx.int64("axis1", 2));
  return transpose_dims(ctx, *self, *axis0, *axis1);
}

// numpy_T(Tensor(a) self): every dim reversed (Tensor.T; torch warns for a rank other than 2, but
// reverses them all).
Status numpy_t(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  std::vector<int64_t> sizes(self->sizes().rbegin(), self->sizes().rend());
  std::vector<int64_t> strides(self->strides().rbegin(), self->strides().rend());
  return set_output(ctx, 0, self->as_strided(sizes, strides, self->storage_offset()));
}

// diagonal(Tensor(a) self, int offset=0, int dim1=0, int dim2=1): the diagonal of dims dim1 and
// dim2 (above the main one for a positive offset, below for a negative one) as a last dim, those
// two dims removed; an offset past the edge gives an empty diagonal.
Status diagonal(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(offset, ctx.int64("offset", 1, 0));
  NRT_TRY(dim1, ctx.int64("dim1", 2, 0));
  NRT_TRY(dim2, ctx.int64("dim2", 3, 1));
  NRT_TRY(a, wrap_dim(ctx, *dim1, self->dim()));
  NRT_TRY(b, wrap_dim(ctx, *dim2, self->dim()));
  if (self->dim() < 2) return ctx.error("diagonal needs at least 2 dimensions, got " + shape_string(self->sizes()));
  if (*a == *b) return ctx.error("diagonal dimensions cannot be identical " + std::to_string(*dim1) + ", " + std::to_string(*dim2));
  const auto i = static_cast<size_t>(*a), j = static_cast<size_t>(*b);
  const int64_t rows = self->sizes()[i], columns = self->sizes()[j];
  // Computed so that no huge offset overflows: the diagonal is empty once it passes the edge.
  int64_t length = 0;
  if (*offset >= 0) {
    length = *offset < columns ? std::min(rows, columns - *offset) : 0;
  } else {
    length = *offset > -rows ? std::min(rows + *offset, columns) : 0;
  }
  int64_t storage_offset = self->storage_offset();
  if (length > 0) storage_offset += *offset >= 0 ? *offset * self->strides()[j] : -*offset * self->strides()[i];
  std::vector<int64_t> sizes, strides;
  for (size_t d = 0; d < self->sizes().size(); ++d) {
    if (d == i || d == j) continue;
    sizes.push_back(self->sizes()[d]);
    strides.push_back(self->strides()[d]);
  }
  sizes.push_back(length);
  strides.push_back(self->strides()[i] + self->strides()[j]);
  return set_output(ctx, 0, self->as_strided(sizes, strides, storage_offset));
}

// t(Tensor self): transposes a 2-D tensor, returns 0-D and 1-D ones as they are.
Status t(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (self->dim() > 2) return ctx.error("t() expects a tensor with at most 2 dimensions, got " + shape_string(self->sizes()));
  if (self->dim() < 2) return set_output(ctx, 0, *self);
  return transpose_dims(ctx, *self, 0, 1);
}

// as_strided(Tensor self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None): a view of
// self's storage (offset default: self's). Every element it reaches must lie inside the storage;
// the view sees the storage as nrt laid it out, which is torch's layout for inputs and weights and
// for planned values whose graph records dense strides.
Status as_strided(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(sizes, ctx.int_list("size", 1));
  NRT_TRY(strides, ctx.int_list("stride", 2));
  NRT_TRY(offset, ctx.int64("storage_offset", 3, self->storage_offset()));
  if (sizes->size() != strides->size()) {
    return ctx.error("size and stride must have the same length, got " + std::to_string(sizes->size()) + " and " +
                     std::to_string(strides->size()));
  }
  if (*offset < 0) return ctx.error("storage_offset must be non-negative, got " + std::to_string(*offset));
  int64_t last = *offset;  // the furthest element the view reaches
  bool empty = false;
  for (size_t d = 0; d < sizes->size(); ++d) {
    if ((*sizes)[d] < 0 || (*strides)[d] < 0) return ctx.error("negative size or stride in as_strided");
    if ((*sizes)[d] == 0) empty = true;
    int64_t reach = 0;
    if ((*sizes)[d] > 0 && (__builtin_mul_overflow((*sizes)[d] - 1, (*strides)[d], &reach) ||
                            __builtin_add_overflow(last, reach, &last))) {
      return ctx.error("as_strided view overflows");
    }
  }
  const auto elem = static_cast<int64_t>(self->element_size());
  const int64_t capacity = elem > 0 ? static_cast<int64_t>(self->storage()->bytes()) / elem : 0;
  if (!empty && last >= capacity) {
    return ctx.error("the view reaches element " + std::to_string(last) + " of a storage of " +
                     std::to_string(capacity) + " elements");
  }
  return set_output(ctx, 0, self->as_strided(*sizes, *strides, *offset));
}

// `self` broadcast to `size` (expand's rules: -1 keeps a dim, new dims lead, size-1 dims stretch
// with stride 0).
Status expand_to(KernelContext& ctx, const Tensor& self, const std::vector<int64_t>& size) {
  if (static_cast<int64_t>(size.size()) < self.dim()) {
    return ctx.error("size " + shape_string(size) + " has fewer dimensions than the input " +
                     shape_string(self.sizes()));
  }
  const size_t lead = size.size() - self.sizes().size();
  std::vector<int64_t> sizes(size.size()), strides(size.size(), 0);
  for (size_t i = 0; i < size.size(); ++i) {
    const int64_t want = size[i];
    if (i < lead) {
      if (want < 0) return ctx.error("-1 is not allowed for a new leading dimension in " + shape_string(size));
      sizes[i] = want;
      continue;
    }
    const int64_t have = self.sizes()[i - lead];
    if (want == -1 || want == have) {
      sizes[i] = have;
      strides[i] = self.strides()[i - lead];
    } else if (have == 1 && want >= 0) {
      sizes[i] = want;
    } else {
      return ctx.error("cannot expand " + shape_string(self.sizes()) + " to " + shape_string(size));
    }
  }
  return set_output(ctx, 0, self.as_strided(sizes, strides, self.storage_offset()));
}

// expand(Tensor(a) self, SymInt[] size, *, bool implicit=False)
Status expand(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(size, ctx.int_list("size", 1));
  return expand_to(ctx, *self, *size);
}

// expand_as(Tensor(a) self, Tensor other): expand to other's sizes.
Status expand_as(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(other, ctx.tensor("other", 1));
  return expand_to(ctx, *self, other->sizes());
}

// unsqueeze(Tensor self, int dim)
Status unsqueeze(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim() + 1));
  const auto i = static_cast<size_t>(*d);
  std::vector<int64_t> sizes = self->sizes(), strides = self->strides();
  const int64_t stride = i >= sizes.size() ? 1 : sizes[i] * strides[i];
  sizes.insert(sizes.begin() + *d, 1);
  strides.insert(strides.begin() + *d, stride);
  return set_output(ctx, 0, self->as_strided(sizes, strides, self->storage_offset()));
}

Status squeeze_mask(KernelContext& ctx, const Tensor& self, const std::vector<bool>& mask) {
  std::vector<int64_t> sizes, strides;
  for (size_t d = 0; d < self.sizes().size(); ++d) {
    if (mask[d] && self.sizes()[d] == 1) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return set_output(ctx, 0, self.as_strided(sizes, strides, self.storage_offset()));
}

// squeeze(Tensor self); squeeze.dim(Tensor self, int dim); squeeze.dims(Tensor self, int[] dim)
Status squeeze(KernelContext& ctx, bool with_dims) {
  NRT_TRY(self, ctx.tensor("self", 0));
  std::vector<bool> mask(static_cast<size_t>(self->dim()), !with_dims);
  if (with_dims) {
    NRT_TRY(dims, ctx.int_list("dim", 1));
    for (int64_t d : *dims) {
      NRT_TRY(w, wrap_dim(ctx, d, self->dim()));
      if (self->dim() > 0) mask[static_cast<size_t>(*w)] = true;
    }
  }
  return squeeze_mask(ctx, *self, mask);
}

// slice.Tensor(Tensor self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1)
Status slice(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(view, slice_view(ctx, *self, 1));
  return set_output(ctx, 0, std::move(*view));
}

// narrow(Tensor self, int dim, SymInt start, SymInt length)
Status narrow(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (self->dim() == 0) return ctx.error("narrow() cannot be applied to a 0-d tensor");
  NRT_TRY(dim, ctx.int64("dim", 1));
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  const auto i = static_cast<size_t>(*d);
  NRT_TRY(start, ctx.int64("start", 2));
  NRT_TRY(length, ctx.int64("length", 3));
  const int64_t size = self->sizes()[i];
  const int64_t from = *start < 0 ? *start + size : *start;
  if (from < 0 || from > size || *length < 0 || from + *length > size) {
    return ctx.error("range [" + std::to_string(*start) + ", +" + std::to_string(*length) + ") exceeds size " +
                     std::to_string(size));
  }
  return set_output(ctx, 0, narrow_view(*self, *d, from, *length));
}

// select.int(Tensor self, int dim, SymInt index)
Status select(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  NRT_TRY(view, select_view(ctx, *self, 1));
  return set_output(ctx, 0, std::move(*view));
}

// alias(Tensor self), detach(Tensor self): the same view.
Status alias(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  return set_output(ctx, 0, *self);
}

// dropout(Tensor input, float p, bool train): the identity in inference.
Status dropout(KernelContext& ctx) {
  NRT_TRY(input, ctx.tensor("input", 0));
  NRT_TRY(p, ctx.real("p", 1));
  NRT_TRY(train, ctx.boolean("train", 2));
  if (*train && *p > 0.0) return dropout_in_training(ctx, *input, *p, false);
  return set_output(ctx, 0, *input);
}

const NamedKernel kViewKernels[] = {
    {"aten::view.default", {[](KernelContext& ctx) { return view(ctx, "size", false); }, true}},
    {"aten::_unsafe_view.default", {[](KernelContext& ctx) { return view(ctx, "size", true); }, true}},
    {"aten::reshape.default", {[](KernelContext& ctx) { return view(ctx, "shape", true); }, true}},
    {"aten::view_as.default", {&view_as, true}},
    {"aten::flatten.using_ints", {&flatten, true}},
    {"aten::unflatten.int", {&unflatten, true}},
    {"aten::contiguous.default", {&contiguous, true}},
    {"aten::permute.default", {&permute, true}},
    {"aten::transpose.int", {&transpose, true}},
    {"aten::t.default", {&t, true}},
    {"aten::expand.default", {&expand, true}},
    {"aten::expand_as.default", {&expand_as, true}},
    {"aten::swapaxes.default", {&swapaxes, true}},
    {"aten::numpy_T.default", {&numpy_t, true}},
    {"aten::diagonal.default", {&diagonal, true}},
    {"aten::as_strided.default", {&as_strided, true}},
    {"aten::unsqueeze.default", {&unsqueeze, true}},
    {"aten::squeeze.default", {[](KernelContext& ctx) { return squeeze(ctx, false); }, true}},
    {"aten::squeeze.dim", {[](KernelContext& ctx) { return squeeze(ctx, true); }, true}},
    {"aten::squeeze.dims", {[](KernelContext& ctx) { return squeeze(ctx, true); }, true}},
    {"aten::slice.Tensor", {&slice, true}},
    {"aten::narrow.default", {&narrow, true}},
    {"aten::select.int", {&select, true}},
    {"aten::alias.default", {&alias, true}},
    {"aten::detach.default", {&alias, true}},
    {"aten::dropout.default", {&dropout, true}},
};

// A view reads no element (and a copy goes through the device's strided copy): the same kernels
// serve the host and CUDA.
const bool kViewKernelsRegistered = register_for_devices(kViewKernels, {DeviceKind::kCpu, DeviceKind::kCuda});

}  // namespace
}  // namespace nrt::exec::cpu
