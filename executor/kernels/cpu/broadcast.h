// NumPy/torch broadcasting: shapes align at the trailing dimension; sizes must be equal or 1.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "executor/tensor.h"

namespace nrt::exec::cpu {

// The broadcast shape of `a` and `b`; nullopt when they do not broadcast.
std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b);

// True when `from` broadcasts to exactly `to`.
bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to);

// A view of `t` with `sizes` (stride 0 along broadcast dimensions); requires broadcasts_to.
Tensor expand_to(const Tensor& t, const std::vector<int64_t>& sizes);

std::string shape_string(const std::vector<int64_t>& sizes);  // "[2, 3]"

}  // namespace nrt::exec::cpu
