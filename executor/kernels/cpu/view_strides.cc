#include "executor/kernels/cpu/view_strides.h"

#include <algorithm>

#include "executor/kernels/cpu/broadcast.h"
#include "executor/kernels/cpu/dimensions.h"

namespace nrt::exec::cpu {

std::optional<std::vector<int64_t>> view_strides(const std::vector<int64_t>& old_sizes_in,
                                                 const std::vector<int64_t>& old_strides_in,
                                                 const std::vector<int64_t>& new_sizes) {
  std::vector<int64_t> new_strides(new_sizes.size(), 0);
  // A 0-d tensor views like a [1] tensor.
  const std::vector<int64_t> old_sizes = old_sizes_in.empty() ? std::vector<int64_t>{1} : old_sizes_in;
  const std::vector<int64_t> old_strides = old_strides_in.empty() ? std::vector<int64_t>{1} : old_strides_in;
  int64_t numel = 1;
  for (int64_t s : old_sizes) numel *= s;
  if (numel == 0) {
    // Any layout of nothing is valid; give contiguous strides.
    return Tensor::contiguous_strides(new_sizes);
  }
  auto view_d = static_cast<int64_t>(new_sizes.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (auto tensor_d = static_cast<int64_t>(old_sizes.size()) - 1; tensor_d >= 0; --tensor_d) {
    const auto td = static_cast<size_t>(tensor_d);
    tensor_numel *= old_sizes[td];
    // A chunk ends where the next-outer dimension is not contiguous with this one.
    if (tensor_d == 0 || (old_sizes[td - 1] != 1 && old_strides[td - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[static_cast<size_t>(view_d)] == 1)) {
        new_strides[static_cast<size_t>(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[static_cast<size_t>(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[td - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

Result<std::vector<int64_t>> infer_view_sizes(const KernelContext& ctx, std::vector<int64_t> sizes, int64_t numel) {
  int64_t known = 1;
  std::optional<size_t> inferred;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == -1) {
      if (inferred) return ctx.error("only one dimension can be inferred in " + shape_string(sizes));
      inferred = i;
    } else if (sizes[i] < 0) {
      return ctx.error("invalid size " + std::to_string(sizes[i]) + " in " + shape_string(sizes));
    } else {
      known *= sizes[i];
    }
  }
  if (inferred) {
    if (known == 0) return ctx.error("cannot infer -1 in " + shape_string(sizes) + " next to a zero size");
    if (numel % known != 0) {
      return ctx.error("shape " + shape_string(sizes) + " is invalid for " + std::to_string(numel) + " elements");
    }
    sizes[*inferred] = numel / known;
  } else if (known != numel) {
    return ctx.error("shape " + shape_string(sizes) + " is invalid for " + std::to_string(numel) + " elements");
  }
  return sizes;
}

Result<Tensor> slice_view(const KernelContext& ctx, const Tensor& self, int first) {
  if (self.dim() == 0) return ctx.error("slice() cannot be applied to a 0-d tensor");
  NRT_TRY(dim, ctx.int64("dim", first, 0));
  NRT_TRY(d, wrap_dim(ctx, *dim, self.dim()));
  const int64_t size = self.sizes()[static_cast<size_t>(*d)];
  NRT_TRY(start, ctx.int64("start", first + 1, 0));
  NRT_TRY(end, ctx.int64("end", first + 2, size));
  NRT_TRY(step, ctx.int64("step", first + 3, 1));
  if (*step <= 0) return ctx.error("slice step must be positive, got " + std::to_string(*step));
  auto clamp_index = [size](int64_t i) {
    if (i < 0) i += size;
    return std::clamp<int64_t>(i, 0, size);
  };
  const int64_t from = clamp_index(*start);
  const int64_t to = std::max(from, clamp_index(*end));
  std::vector<int64_t> sizes = self.sizes(), strides = self.strides();
  const auto i = static_cast<size_t>(*d);
  sizes[i] = (to - from + *step - 1) / *step;
  const int64_t offset = self.storage_offset() + from * strides[i];
  strides[i] *= *step;
  return self.as_strided(sizes, strides, offset);
}

Tensor narrow_view(const Tensor& t, int64_t dim, int64_t begin, int64_t length) {
  std::vector<int64_t> sizes = t.sizes();
  const auto d = static_cast<size_t>(dim);
  sizes[d] = length;
  return t.as_strided(sizes, t.strides(), t.storage_offset() + begin * t.strides()[d]);
}

Result<Tensor> select_view(const KernelContext& ctx, const Tensor& self, int first) {
  if (self.dim() == 0) return ctx.error("select() cannot be applied to a 0-d tensor");
  NRT_TRY(dim, ctx.int64("dim", first));
  NRT_TRY(d, wrap_dim(ctx, *dim, self.dim()));
  NRT_TRY(index, ctx.int64("index", first + 1));
  const auto i = static_cast<size_t>(*d);
  const int64_t size = self.sizes()[i];
  if (*index < -size || *index >= size) {
    return ctx.error("index " + std::to_string(*index) + " is out of range for size " + std::to_string(size));
  }
  const int64_t at = *index < 0 ? *index + size : *index;
  std::vector<int64_t> sizes = self.sizes(), strides = self.strides();
  const int64_t offset = self.storage_offset() + at * strides[i];
  sizes.erase(sizes.begin() + *d);
  strides.erase(strides.begin() + *d);
  return self.as_strided(sizes, strides, offset);
}

}  // namespace nrt::exec::cpu
