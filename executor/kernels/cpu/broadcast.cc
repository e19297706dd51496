#include "executor/kernels/cpu/broadcast.h"

#include <algorithm>

namespace nrt::exec::cpu {

std::optional<std::vector<int64_t>> broadcast_shapes(std::span<const int64_t> a, std::span<const int64_t> b) {
  DimVector shape(a);
  if (!broadcast_into(shape, b)) return std::nullopt;
  return shape.to_vector();
}

bool broadcast_into(DimVector& shape, std::span<const int64_t> sizes) {
  if (same_dims(shape, sizes)) return true;
  if (shape.empty()) {
    shape.assign(sizes);
    return true;
  }
  if (sizes.size() > shape.size()) {
    const size_t grow = sizes.size() - shape.size();
    shape.resize(sizes.size());
    std::copy_backward(shape.begin(), shape.end() - grow, shape.end());
    std::fill(shape.begin(), shape.begin() + grow, int64_t{1});
  }
  const size_t offset = shape.size() - sizes.size();
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t& s = shape[offset + i];
    if (sizes[i] == s || sizes[i] == 1) continue;
    if (s != 1) return false;
    s = sizes[i];
  }
  return true;
}

bool broadcasts_to(std::span<const int64_t> from, std::span<const int64_t> to) {
  if (from.size() > to.size()) return false;
  for (size_t i = 0; i < from.size(); ++i) {
    const int64_t f = from[from.size() - 1 - i];
    if (f != 1 && f != to[to.size() - 1 - i]) return false;
  }
  return true;
}

Tensor expand_to(const Tensor& t, const std::vector<int64_t>& sizes) {
  if (t.sizes() == sizes) return t;
  std::vector<int64_t> strides(sizes.size(), 0);
  const size_t offset = sizes.size() - t.sizes().size();
  for (size_t i = 0; i < t.sizes().size(); ++i) {
    strides[offset + i] = t.sizes()[i] == 1 && sizes[offset + i] != 1 ? 0 : t.strides()[i];
  }
  return t.as_strided(sizes, std::move(strides), t.storage_offset());
}

std::string shape_string(std::span<const int64_t> sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace nrt::exec::cpu
