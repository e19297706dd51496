// Channels-first values ([N, C, P] in memory, P the positions of a row or a plane) laid out
// channels-last ([N, P, C]), or back: the kernel tests' reference for the layouts a kernel reads
// and writes, a float at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace nrt::exec::cpu {

inline std::vector<float> relayout(const std::vector<float>& from, int64_t batches, int64_t channels,
                                   int64_t positions, bool to_last) {
  std::vector<float> to(from.size());
  for (int64_t n = 0; n < batches; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t p = 0; p < positions; ++p) {
        const auto first = static_cast<size_t>((n * channels + c) * positions + p);
        const auto last = static_cast<size_t>((n * positions + p) * channels + c);
        to[to_last ? last : first] = from[to_last ? first : last];
      }
    }
  }
  return to;
}

}  // namespace nrt::exec::cpu
