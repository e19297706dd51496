#include "executor/random/philox_blocks.h"

#include "executor/random/philox.h"

namespace nrt::random {
namespace detail {

void philox_blocks_scalar(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words) {
  const PhiloxKey k = philox_key(key);
  for (int64_t i = 0; i < count; ++i) {
    const PhiloxWords block = philox4x32_10(philox_counter(first_counter + static_cast<uint64_t>(i)), k);
    for (int j = 0; j < 4; ++j) words[4 * i + j] = block.w[j];
  }
}

bool cpu_has_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

bool cpu_has_avx512() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}

}  // namespace detail

void philox_blocks(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words) {
  if (detail::cpu_has_avx512()) {
    detail::philox_blocks_avx512(key, first_counter, count, words);
  } else if (detail::cpu_has_avx2()) {
    detail::philox_blocks_avx2(key, first_counter, count, words);
  } else {
    detail::philox_blocks_scalar(key, first_counter, count, words);
  }
}

}  // namespace nrt::random
