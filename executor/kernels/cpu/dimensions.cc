#include "executor/kernels/cpu/dimensions.h"

#include <string>

namespace nrt::exec::cpu {

Result<int64_t> wrap_dim(const KernelContext& ctx, int64_t dim, int64_t ndim) {
  const int64_t extent = ndim == 0 ? 1 : ndim;
  if (dim < -extent || dim >= extent) {
    return ctx.error("dimension " + std::to_string(dim) + " is out of range [" + std::to_string(-extent) + ", " +
                     std::to_string(extent - 1) + "]");
  }
  return dim < 0 ? dim + extent : dim;
}

Result<std::vector<bool>> reduction_mask(const KernelContext& ctx, const std::vector<int64_t>& dims, int64_t ndim) {
  std::vector<bool> mask(static_cast<size_t>(ndim), dims.empty());
  for (int64_t d : dims) {
    NRT_TRY(w, wrap_dim(ctx, d, ndim));
    if (ndim == 0) continue;
    if (mask[static_cast<size_t>(*w)]) return ctx.error("dimension " + std::to_string(d) + " appears twice");
    mask[static_cast<size_t>(*w)] = true;
  }
  return mask;
}

int64_t product(const std::vector<int64_t>& sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

}  // namespace nrt::exec::cpu
