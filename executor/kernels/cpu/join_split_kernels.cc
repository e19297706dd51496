// Joining tensors (cat, stack: fresh output, dtypes promoted as torch does) and splitting one
// (split, split_with_sizes, chunk, unbind: a Tensor[] of views into the input, in output 0).
#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/type_promotion.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {
namespace {

Result<ScalarType> joined_dtype(const KernelContext& ctx, const std::vector<Tensor>& tensors) {
  std::vector<PromotionOperand> promotion;
  for (const auto& t : tensors) {
    if (!is_kernel_dtype(t.dtype())) {
      // Same-dtype joins of other dtypes only move bytes.
      if (t.dtype() == tensors[0].dtype()) continue;
      return unsupported_dtype(ctx, t.dtype());
    }
    promotion.push_back({t.dtype(), PromotionClass::kTensor});
  }
  if (promotion.empty()) return tensors[0].dtype();
  if (promotion.size() != tensors.size()) return unsupported_dtype(ctx, tensors[0].dtype());
  return result_type(promotion);
}

// cat(Tensor[] tensors, int dim=0). 1-D empty tensors are skipped (torch's legacy rule).
Status cat(KernelContext& ctx) {
  NRT_TRY(tensors, ctx.tensor_list("tensors", 0));
  if (tensors->empty()) return ctx.error("expects a non-empty list of tensors");
  NRT_TRY(dim, ctx.int64("dim", 1, 0));
  NRT_TRY(dtype, joined_dtype(ctx, *tensors));
  std::vector<const Tensor*> parts;
  for (const auto& t : *tensors) {
    if (t.dim() == 1 && t.sizes()[0] == 0) continue;
    if (t.dim() == 0) return ctx.error("zero-dimensional tensors cannot be concatenated");
    parts.push_back(&t);
  }
  if (parts.empty()) {
    NRT_TRY(out, bind_output(ctx, 0, *dtype, {0}));
    return Status::Ok();
  }
  const Tensor& first = *parts[0];
  NRT_TRY(d, wrap_dim(ctx, *dim, first.dim()));
  const auto axis = static_cast<size_t>(*d);
  std::vector<int64_t> sizes = first.sizes();
  sizes[axis] = 0;
  for (const Tensor* t : parts) {
    bool fits = t->dim() == first.dim();
    for (size_t i = 0; fits && i < sizes.size(); ++i) fits = i == axis || t->sizes()[i] == first.sizes()[i];
    if (!fits) {
      return ctx.error("sizes " + shape_string(t->sizes()) + " and " + shape_string(first.sizes()) +
                       " differ outside dimension " + std::to_string(*d));
    }
    sizes[axis] += t->sizes()[axis];
  }
  NRT_TRY(out, bind_output(ctx, 0, *dtype, sizes));
  int64_t offset = 0;
  for (const Tensor* t : parts) {
    copy_into(narrow_view(*out, static_cast<int64_t>(axis), offset, t->sizes()[axis]), *t);
    offset += t->sizes()[axis];
  }
  return Status::Ok();
}

// stack(Tensor[] tensors, int dim=0)
Status stack(KernelContext& ctx) {
  NRT_TRY(tensors, ctx.tensor_list("tensors", 0));
  if (tensors->empty()) return ctx.error("expects a non-empty list of tensors");
  NRT_TRY(dim, ctx.int64("dim", 1, 0));
  NRT_TRY(dtype, joined_dtype(ctx, *tensors));
  const Tensor& first = (*tensors)[0];
  NRT_TRY(d, wrap_dim(ctx, *dim, first.dim() + 1));
  for (const auto& t : *tensors) {
    if (t.sizes() != first.sizes()) {
      return ctx.error("stack expects equal shapes, got " + shape_string(t.sizes()) + " and " + shape_string(first.sizes()));
    }
  }
  std::vector<int64_t> sizes = first.sizes();
  sizes.insert(sizes.begin() + *d, static_cast<int64_t>(tensors->size()));
  NRT_TRY(out, bind_output(ctx, 0, *dtype, sizes));
  std::vector<int64_t> part_strides = out->strides();
  const int64_t step = part_strides[static_cast<size_t>(*d)];
  part_strides.erase(part_strides.begin() + *d);
  for (size_t i = 0; i < tensors->size(); ++i) {
    const Tensor target =
        out->as_strided(first.sizes(), part_strides, out->storage_offset() + static_cast<int64_t>(i) * step);
    copy_into(target, (*tensors)[i]);
  }
  return Status::Ok();
}

// Views of `self` along `axis` with the given lengths (their sum is the size).
std::vector<Tensor> split_views(const Tensor& self, size_t axis, const std::vector<int64_t>& lengths) {
  std::vector<Tensor> parts;
  int64_t offset = 0;
  for (int64_t length : lengths) {
    parts.push_back(narrow_view(self, static_cast<int64_t>(axis), offset, length));
    offset += length;
  }
  return parts;
}

struct SplitInput {
  Tensor self;
  size_t axis = 0;
  int64_t size = 0;
};

Result<SplitInput> read_split_input(const KernelContext& ctx, int dim_position) {
  NRT_TRY(self, ctx.tensor("self", 0));
  if (self->dim() == 0) return ctx.error("cannot split a 0-d tensor");
  NRT_TRY(dim, ctx.int64("dim", dim_position, 0));
  NRT_TRY(d, wrap_dim(ctx, *dim, self->dim()));
  return SplitInput{*self, static_cast<size_t>(*d), self->sizes()[static_cast<size_t>(*d)]};
}

// Lengths of pieces of `split_size` (the last one shorter); one empty piece for an empty dim.
std::vector<int64_t> equal_lengths(int64_t size, int64_t split_size) {
  std::vector<int64_t> lengths;
  if (size == 0) return {0};
  for (int64_t at = 0; at < size; at += split_size) lengths.push_back(std::min(split_size, size - at));
  return lengths;
}

// split.Tensor(Tensor self, SymInt split_size, int dim=0) -> Tensor[]
Status split(KernelContext& ctx) {
  NRT_TRY(in, read_split_input(ctx, 2));
  NRT_TRY(split_size, ctx.int64("split_size", 1));
  if (*split_size < 0 || (*split_size == 0 && in->size != 0)) {
    return ctx.error("split_size must be positive, got " + std::to_string(*split_size));
  }
  return set_output(ctx, 0, split_views(in->self, in->axis, equal_lengths(in->size, *split_size)));
}

// split_with_sizes(Tensor self, SymInt[] split_sizes, int dim=0) -> Tensor[]
Status split_with_sizes(KernelContext& ctx, std::string_view sizes_name) {
  NRT_TRY(in, read_split_input(ctx, 2));
  NRT_TRY(lengths, ctx.int_list(sizes_name, 1));
  int64_t total = 0;
  for (int64_t l : *lengths) {
    if (l < 0) return ctx.error("split sizes must be non-negative, got " + shape_string(*lengths));
    total += l;
  }
  if (total != in->size) {
    return ctx.error("split sizes " + shape_string(*lengths) + " do not add up to " + std::to_string(in->size));
  }
  return set_output(ctx, 0, split_views(in->self, in->axis, *lengths));
}

// chunk(Tensor self, int chunks, int dim=0) -> Tensor[]
Status chunk(KernelContext& ctx) {
  NRT_TRY(in, read_split_input(ctx, 2));
  NRT_TRY(chunks, ctx.int64("chunks", 1));
  if (*chunks <= 0) return ctx.error("chunks must be positive, got " + std::to_string(*chunks));
  const int64_t split_size = (in->size + *chunks - 1) / *chunks;
  std::vector<int64_t> lengths;
  if (split_size == 0) {
    lengths.assign(static_cast<size_t>(*chunks), 0);  // torch gives `chunks` empty pieces
  } else {
    lengths = equal_lengths(in->size, split_size);
  }
  return set_output(ctx, 0, split_views(in->self, in->axis, lengths));
}

// unbind.int(Tensor self, int dim=0) -> Tensor[]
Status unbind(KernelContext& ctx) {
  NRT_TRY(in, read_split_input(ctx, 1));
  std::vector<Tensor> parts;
  std::vector<int64_t> sizes = in->self.sizes(), strides = in->self.strides();
  const int64_t step = strides[in->axis];
  sizes.erase(sizes.begin() + static_cast<int64_t>(in->axis));
  strides.erase(strides.begin() + static_cast<int64_t>(in->axis));
  for (int64_t i = 0; i < in->size; ++i) {
    parts.push_back(in->self.as_strided(sizes, strides, in->self.storage_offset() + i * step));
  }
  return set_output(ctx, 0, std::move(parts));
}

// Splits are views (no element is read) and cat copies through copy_into, which moves elements
// on a device through its strided copy: these serve CUDA too.
const NamedKernel kJoinSplitKernels[] = {
    {"aten::cat.default", {&cat, false}},
    {"aten::concat.default", {&cat, false}},
    {"aten::split.Tensor", {&split, true}},
    {"aten::split.sizes", {[](KernelContext& ctx) { return split_with_sizes(ctx, "split_size"); }, true}},
    {"aten::split_with_sizes.default", {[](KernelContext& ctx) { return split_with_sizes(ctx, "split_sizes"); }, true}},
    {"aten::chunk.default", {&chunk, true}},
    {"aten::unbind.int", {&unbind, true}},
};
const bool kJoinSplitKernelsRegistered = register_for_devices(kJoinSplitKernels, {DeviceKind::kCpu, DeviceKind::kCuda});
const KernelRegistration kStack("aten::stack.default", DeviceKind::kCpu, {&stack, false});

}  // namespace
}  // namespace nrt::exec::cpu
