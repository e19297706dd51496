// Whether a strided tensor can be viewed with new sizes without copying, and with which strides
// (torch's computeStride: dimensions may be split or merged only where the old layout is
// contiguous across them). Also the `-1` inference of view/reshape sizes, and the slice and
// select views that view and scatter kernels share.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::exec::cpu {

std::optional<std::vector<int64_t>> view_strides(const std::vector<int64_t>& old_sizes,
                                                 const std::vector<int64_t>& old_strides,
                                                 const std::vector<int64_t>& new_sizes);

// `sizes` with a single -1 replaced so that the product is `numel`; errors for a mismatch, several
// -1, other negative sizes, or an ambiguous -1 next to a zero size.
Result<std::vector<int64_t>> infer_view_sizes(const KernelContext& ctx, std::vector<int64_t> sizes, int64_t numel);

// The views slice(self, dim=0, start=None, end=None, step=1) and select(self, dim, index) make,
// their arguments read from ctx from position `first` on (1 for slice itself, 2 for
// slice_scatter, whose `src` comes first). Indices clamp (slice) or must be in range (select).
Result<Tensor> slice_view(const KernelContext& ctx, const Tensor& self, int first);

// `t` restricted to [begin, begin + length) along `dim` (in range: the caller checked), a view:
// the parts cat writes, split returns, padding and flip copy between.
Tensor narrow_view(const Tensor& t, int64_t dim, int64_t begin, int64_t length);
Result<Tensor> select_view(const KernelContext& ctx, const Tensor& self, int first);

}  // namespace nrt::exec::cpu
