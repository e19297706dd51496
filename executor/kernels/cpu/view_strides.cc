#include "executor/kernels/cpu/view_strides.h"

#include "executor/kernels/cpu/broadcast.h"

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

}  // namespace nrt::exec::cpu
