// NumPy/torch broadcasting: shapes align at the trailing dimension; sizes must be equal or 1.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "executor/kernels/cpu/dim_vector.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// The broadcast shape of `a` and `b`; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b);

// Broadcasts `shape` with `sizes` in place (no allocation for up to DimVector::kInline dims);
// false when they do not broadcast, `shape` then holds no meaningful value.
bool broadcast_into(DimVector& shape, std::span<const int64_t> sizes);

// True when `from` broadcasts to exactly `to`.
bool broadcasts_to(std::span<const int64_t> from, std::span<const int64_t> to);

// A view of `t` with `sizes` (stride 0 along broadcast dimensions); requires broadcasts_to.
Tensor expand_to(const Tensor& t, const std::vector<int64_t>& sizes);

std::string shape_string(std::span<const int64_t> sizes);  // "[2, 3]"

}  // namespace nrt::exec::cpu
