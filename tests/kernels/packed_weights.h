// Pointwise weights [out][in] packed as the kernels read them (pointwise_product.h):
// [ceil(out / 16)][in][16], zeros past `out`, for the kernel tests.
#pragma once

#include <cstdint>
#include <vector>

namespace nrt::exec::cpu {

inline std::vector<float> packed(const std::vector<float>& w, int64_t out, int64_t in) {
  std::vector<float> p(static_cast<size_t>((out + 15) / 16 * in * 16), 0.0f);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) p[static_cast<size_t>(((o / 16) * in + i) * 16 + o % 16)] = w[static_cast<size_t>(o * in + i)];
  }
  return p;
}

}  // namespace nrt::exec::cpu
