// Indexing on CUDA through one gather kernel (index_kernels.cu): index.Tensor (advanced indexing,
// torch's placement of the broadcast index dims: where the indexed dims were when they are
// adjacent, else first), gather and index_select. An index out of range is an error naming the
// dim's size, as on the CPU; bool mask indices are refused, as on the CPU.
#include <optional>
#include <string>
#include <vector>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/output_slot.h"
#include "executor/kernels/cuda/index_launch.h"
#include "executor/kernels/cuda/kernel_support.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cuda {
namespace {

// Runs the gather from `self` (contiguous: its strides are in `g`) into `out` (bound by the
// caller), then checks the out-of-range flag.
Status run_gather(KernelContext& ctx, IndexGather& g, const Tensor& self, const Tensor& out, const std::string& limits) {
  Tensor target = out.is_contiguous() ? out : Tensor::empty(out.dtype(), out.sizes(), out.device());
  Tensor bad = Tensor::empty(ScalarType::INT32, {}, out.device());
  g.numel = out.numel();
  g.element_bytes = static_cast<int64_t>(self.element_size());
  g.self = self.raw_data();
  g.out = target.raw_data();
  g.bad = bad.data<int32_t>();
  NRT_RETURN_IF_ERROR(launch_result(ctx, launch_index_gather(g, context_of(ctx).stream), "index gather launch"));
  if (!out.is_contiguous()) NRT_RETURN_IF_ERROR(copy_into(ctx, out, target));
  NRT_TRY(flag, copy_to_device(bad, Device{}));
  if (*flag->data<int32_t>() != 0) return ctx.error("an index is out of range (" + limits + ")");
  return {};
}

Status check_dims(const KernelContext& ctx, size_t dims) {
  if (dims > static_cast<size_t>(kMaxDims)) return ctx.error("more than " + std::to_string(kMaxDims) + " dims on CUDA");
  return {};
}

// index.Tensor(Tensor self, Tensor?[] indices)
Status index(KernelContext& ctx) {
  NRT_TRY(self_arg, ctx.tensor("self", 0));
  const RuntimeValue* list = ctx.find("indices", 1);
  if (list == nullptr) return ctx.error("missing argument 'indices'");
  std::vector<std::optional<Tensor>> given;
  if (const auto* optional = std::get_if<std::vector<std::optional<Tensor>>>(list)) {
    given = *optional;
  } else if (const auto* plain = std::get_if<std::vector<Tensor>>(list)) {
    given.assign(plain->begin(), plain->end());
  } else {
    return ctx.error("indices must be a list of tensors");
  }
  std::vector<std::optional<Tensor>> indices;
  for (auto& t : given) {
    if (t && t->dtype() == ScalarType::BOOL) {
      return ctx.error("boolean mask indices are not supported (their result shape depends on the data)");
    } else if (t && t->dtype() != ScalarType::INT64 && t->dtype() != ScalarType::INT32) {
      return ctx.error("indices must be int64, int32 or bool, got " + t->type_string());
    } else {
      indices.push_back(t);
    }
  }
  NRT_TRY(contiguous_self, contiguous(ctx, *self_arg));
  const Tensor& self = *contiguous_self;
  if (indices.size() > static_cast<size_t>(self.dim())) return ctx.error("too many indices for " + self.type_string());
  std::vector<size_t> indexed;
  std::vector<int64_t> broadcast;
  for (size_t d = 0; d < indices.size(); ++d) {
    if (!indices[d]) continue;
    indexed.push_back(d);
    auto shape = cpu::broadcast_shapes(broadcast, indices[d]->sizes());
    if (!shape) return ctx.error("the index tensors do not broadcast together");
    broadcast = *shape;
  }
  if (indexed.empty()) return cpu::set_output(ctx, 0, *self_arg);
  if (indexed.size() > static_cast<size_t>(kMaxIndexTensors)) return ctx.error("more than 4 index tensors on CUDA");
  const bool adjacent = indexed.back() - indexed.front() + 1 == indexed.size();
  // The output's dims: each either a dim of self (its stride) or a broadcast index dim.
  std::vector<int64_t> sizes, self_strides;
  std::vector<int> index_dim;  // for broadcast dims: which of them (else -1)
  auto add_broadcast = [&] {
    for (size_t b = 0; b < broadcast.size(); ++b) {
      sizes.push_back(broadcast[b]);
      self_strides.push_back(0);
      index_dim.push_back(static_cast<int>(b));
    }
  };
  if (!adjacent) add_broadcast();
  for (size_t d = 0; d < static_cast<size_t>(self.dim()); ++d) {
    const bool is_indexed = d < indices.size() && indices[d].has_value();
    if (is_indexed) {
      if (adjacent && d == indexed.front()) add_broadcast();
      continue;
    }
    sizes.push_back(self.sizes()[d]);
    self_strides.push_back(self.strides()[d]);
    index_dim.push_back(-1);
  }
  NRT_RETURN_IF_ERROR(check_dims(ctx, sizes.size()));
  NRT_TRY(out, cpu::bind_output(ctx, 0, self.dtype(), sizes));
  IndexGather g;
  g.dims = static_cast<int>(sizes.size());
  std::vector<Tensor> keep;  // the int64 index tensors, alive until the launch is enqueued
  std::string limits;
  for (size_t k = 0; k < indexed.size(); ++k) {
    const size_t d = indexed[k];
    NRT_TRY(as_long, as_dtype(ctx, *indices[d], ScalarType::INT64));
    const Tensor expanded = cpu::expand_to(*as_long, broadcast);
    keep.push_back(*as_long);
    g.index[k] = expanded.data<int64_t>();
    for (size_t o = 0; o < sizes.size(); ++o) {
      g.index_strides[k][o] = index_dim[o] >= 0 ? expanded.strides()[static_cast<size_t>(index_dim[o])] : 0;
    }
    g.index_step[k] = self.strides()[d];
    g.index_limit[k] = self.sizes()[d];
    limits += (limits.empty() ? "" : ", ") + std::string("dim ") + std::to_string(d) + " has size " + std::to_string(self.sizes()[d]);
  }
  g.tensors = static_cast<int>(indexed.size());
  for (size_t o = 0; o < sizes.size(); ++o) {
    g.sizes[o] = sizes[o];
    g.self_strides[o] = self_strides[o];
  }
  return run_gather(ctx, g, self, *out, limits);
}

// gather(Tensor self, int dim, Tensor index, *, bool sparse_grad=False)
Status gather(KernelContext& ctx) {
  NRT_TRY(self_arg, ctx.tensor("self", 0));
  NRT_TRY(dim_arg, ctx.int64("dim", 1));
  NRT_TRY(index_arg, ctx.tensor("index", 2));
  NRT_TRY(self, contiguous(ctx, *self_arg));
  const int64_t rank = std::max<int64_t>(self->dim(), 1);
  if (*dim_arg < -rank || *dim_arg >= rank) return ctx.error("dim out of range");
  const auto dim = static_cast<size_t>(*dim_arg < 0 ? *dim_arg + rank : *dim_arg);
  if (index_arg->dim() != self->dim()) return ctx.error("index and self must have the same rank");
  NRT_RETURN_IF_ERROR(check_dims(ctx, index_arg->sizes().size()));
  for (size_t d = 0; d < index_arg->sizes().size(); ++d) {
    if (d != dim && index_arg->sizes()[d] > self->sizes()[d]) return ctx.error("index is larger than self outside dim");
  }
  NRT_TRY(as_long, as_dtype(ctx, *index_arg, ScalarType::INT64));
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), index_arg->sizes()));
  if (self->dim() == 0) return ctx.error("gather of a 0-d tensor is not supported on CUDA");
  IndexGather g;
  g.dims = static_cast<int>(index_arg->dim());
  g.tensors = 1;
  g.index[0] = as_long->data<int64_t>();
  for (size_t d = 0; d < index_arg->sizes().size(); ++d) {
    g.sizes[d] = index_arg->sizes()[d];
    g.self_strides[d] = d == dim ? 0 : self->strides()[d];
    g.index_strides[0][d] = as_long->strides()[d];
  }
  g.index_step[0] = self->strides()[dim];
  g.index_limit[0] = self->sizes()[dim];
  return run_gather(ctx, g, *self, *out, "dim " + std::to_string(dim) + " has size " + std::to_string(self->sizes()[dim]));
}

// index_select(Tensor self, int dim, Tensor index)
Status index_select(KernelContext& ctx) {
  NRT_TRY(self_arg, ctx.tensor("self", 0));
  NRT_TRY(dim_arg, ctx.int64("dim", 1));
  NRT_TRY(index_arg, ctx.tensor("index", 2));
  NRT_TRY(self, contiguous(ctx, *self_arg));
  if (index_arg->dim() > 1) return ctx.error("index must be 0-d or 1-d");
  const int64_t rank = std::max<int64_t>(self->dim(), 1);
  if (*dim_arg < -rank || *dim_arg >= rank || self->dim() == 0) return ctx.error("dim out of range");
  const auto dim = static_cast<size_t>(*dim_arg < 0 ? *dim_arg + rank : *dim_arg);
  NRT_RETURN_IF_ERROR(check_dims(ctx, self->sizes().size()));
  NRT_TRY(as_long, as_dtype(ctx, *index_arg, ScalarType::INT64));
  std::vector<int64_t> sizes = self->sizes();
  sizes[dim] = index_arg->numel();
  NRT_TRY(out, cpu::bind_output(ctx, 0, self->dtype(), sizes));
  IndexGather g;
  g.dims = static_cast<int>(sizes.size());
  g.tensors = 1;
  g.index[0] = as_long->data<int64_t>();
  for (size_t d = 0; d < sizes.size(); ++d) {
    g.sizes[d] = sizes[d];
    g.self_strides[d] = d == dim ? 0 : self->strides()[d];
    g.index_strides[0][d] = d == dim ? (index_arg->dim() == 1 ? as_long->strides()[0] : 0) : 0;
  }
  g.index_step[0] = self->strides()[dim];
  g.index_limit[0] = self->sizes()[dim];
  return run_gather(ctx, g, *self, *out, "dim " + std::to_string(dim) + " has size " + std::to_string(self->sizes()[dim]));
}

constexpr DeviceKind kCuda = DeviceKind::kCuda;
const KernelRegistration kRegistrations[] = {
    {"aten::index.Tensor", kCuda, {&index, false}},
    {"aten::gather.default", kCuda, {&gather, false}},
    {"aten::index_select.default", kCuda, {&index_select, false}},
};

}  // namespace
}  // namespace nrt::exec::cuda
