// Many consecutive Philox blocks at once, the loop every host-side draw runs: blocks for counters
// first, first + 1, ... (mod 2^64, high counter half 0) written as 4 words each, block after block.
// The AVX-512 build computes 32 blocks per step, the AVX2 build 24; the first call picks the
// widest this CPU has. Every build gives the same words (integer arithmetic only).
#pragma once

#include <cstdint>

namespace nrt::random {

void philox_blocks(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);

// The builds philox_blocks chooses between; tests compare them.
namespace detail {
void philox_blocks_scalar(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);
void philox_blocks_avx2(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);
void philox_blocks_avx512(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);
bool cpu_has_avx2();
bool cpu_has_avx512();
}  // namespace detail

}  // namespace nrt::random
