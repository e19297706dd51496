// Many consecutive Philox blocks at once, the loop every host-side draw runs: blocks for counters
// first, first + 1, ... (mod 2^64, high counter half 0) written as 4 words each, block after block.
// The AVX2 build computes 8 blocks per step; the first call picks it when this CPU has AVX2.
// Both builds give the same words (integer arithmetic only).
#pragma once

#include <cstdint>

namespace nrt::random {

void philox_blocks(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);

// The builds philox_blocks chooses between; tests compare them.
namespace detail {
void philox_blocks_scalar(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);
void philox_blocks_avx2(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);
bool cpu_has_avx2();
}  // namespace detail

}  // namespace nrt::random
