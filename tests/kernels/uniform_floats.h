// Reproducible float inputs for the kernel tests: `count` values drawn uniformly from
// [-half_width, half_width) by a Mersenne twister seeded with `seed`.
#pragma once

#include <cstddef>
#include <random>
#include <vector>

namespace nrt::exec::cpu {

inline std::vector<float> uniform(size_t count, unsigned seed, float half_width = 0.5f) {
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> value(-half_width, half_width);
  std::vector<float> values(count);
  for (float& v : values) v = value(random);
  return values;
}

}  // namespace nrt::exec::cpu
