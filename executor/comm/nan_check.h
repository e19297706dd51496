// The NaN check of collectives (NRT_NAN_CHECK=1, torch's TORCH_NCCL_NAN_CHECK): the index of the
// first NaN in a send buffer, for floating dtypes (f16, bf16, f32, f64; complex parts too).
#pragma once

#include <cstdint>
#include <optional>

#include "executor/runtime/tensor.h"

namespace nrt::exec {

// The flat (row-major) index of the first NaN of `tensor`; nullopt when it holds none, and for
// dtypes that cannot hold one. Host tensors only.
std::optional<int64_t> first_nan_index(const Tensor& tensor);

}  // namespace nrt::exec
