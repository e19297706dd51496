#include "executor/kernels/cpu/broadcast.h"

#include <string>

namespace nrt::exec::cpu {

std::optional<std::vector<int64_t>> broadcast_shapes(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  const size_t n = std::max(a.size(), b.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1;
    const int64_t y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[n - 1 - i] = x == 1 ? y : x;
  }
  return out;
}

bool broadcasts_to(const std::vector<int64_t>& from, const std::vector<int64_t>& to) {
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

std::string shape_string(const std::vector<int64_t>& sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) s += (i ? ", " : "") + std::to_string(sizes[i]);
  return s + "]";
}

}  // namespace nrt::exec::cpu
