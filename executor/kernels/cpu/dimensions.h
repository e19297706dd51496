// Dimension arguments as torch reads them: negative dims count from the end, and a 0-d tensor
// accepts dims 0 and -1 as if it had one dimension.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime/kernel.h"

namespace nrt::exec::cpu {

// `dim` wrapped into [0, ndim) (into [0, 1) for ndim 0); an error naming the range otherwise.
Result<int64_t> wrap_dim(const KernelContext& ctx, int64_t dim, int64_t ndim);

// Which dimensions a reduction over `dims` covers; an empty list means all. Repeats are errors.
Result<std::vector<bool>> reduction_mask(const KernelContext& ctx, const std::vector<int64_t>& dims, int64_t ndim);

int64_t product(const std::vector<int64_t>& sizes);

}  // namespace nrt::exec::cpu
