// philox_blocks for AVX-512: one block per 64-bit lane, the state words in the low halves.
// _mm512_mul_epu32 reads only the low halves, so a product is the next multiplicand as it is
// (its high half is ignored), and its high word is one shift away; the two xors of each output
// word are one ternary-logic instruction. Eight blocks per vector, kGroups vectors interleaved so
// that the multiplier never waits on the previous round.
#include <immintrin.h>

#include "executor/random/philox.h"
#include "executor/random/philox_blocks.h"

namespace nrt::random::detail {
namespace {

constexpr int kGroups = 4;
constexpr int64_t kStep = 8 * kGroups;
constexpr int kXor3 = 0x96;  // _mm512_ternarylogic_epi64 truth table of a ^ b ^ c

}  // namespace

void philox_blocks_avx512(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words) {
  const __m512i m0 = _mm512_set1_epi64(kPhiloxM0);
  const __m512i m1 = _mm512_set1_epi64(kPhiloxM1);
  const PhiloxKey k = philox_key(key);
  const __m512i lanes = _mm512_set_epi64(7, 6, 5, 4, 3, 2, 1, 0);
  // Output order: block b's words 0-1 (one 64-bit lane of `low`) then 2-3 (of `high`).
  const __m512i first_half = _mm512_set_epi64(11, 3, 10, 2, 9, 1, 8, 0);
  const __m512i second_half = _mm512_set_epi64(15, 7, 14, 6, 13, 5, 12, 4);
  int64_t i = 0;
  for (; i + kStep <= count; i += kStep) {
    __m512i c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
    for (int g = 0; g < kGroups; ++g) {
      // 64-bit counters (wrapping like the scalar loop), split into their 32-bit words.
      const __m512i counter = _mm512_add_epi64(
          _mm512_set1_epi64(static_cast<long long>(first_counter + static_cast<uint64_t>(i + 8 * g))), lanes);
      c0[g] = counter;
      c1[g] = _mm512_srli_epi64(counter, 32);
      c2[g] = _mm512_setzero_si512();
      c3[g] = _mm512_setzero_si512();
    }
    uint32_t k0 = k.k0, k1 = k.k1;
    for (int round = 0; round < kPhiloxRounds; ++round) {
      const __m512i key0 = _mm512_set1_epi64(k0);
      const __m512i key1 = _mm512_set1_epi64(k1);
      for (int g = 0; g < kGroups; ++g) {
        const __m512i p0 = _mm512_mul_epu32(c0[g], m0);
        const __m512i p1 = _mm512_mul_epu32(c2[g], m1);
        c0[g] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p1, 32), c1[g], key0, kXor3);
        c1[g] = p1;
        c2[g] = _mm512_ternarylogic_epi64(_mm512_srli_epi64(p0, 32), c3[g], key1, kXor3);
        c3[g] = p0;
      }
      k0 += kPhiloxW0;
      k1 += kPhiloxW1;
    }
    for (int g = 0; g < kGroups; ++g) {
      // Low halves only: words 0 | 1 << 32 and 2 | 3 << 32 of each block.
      const __m512i low = _mm512_mask_blend_epi32(0xAAAA, c0[g], _mm512_slli_epi64(c1[g], 32));
      const __m512i high = _mm512_mask_blend_epi32(0xAAAA, c2[g], _mm512_slli_epi64(c3[g], 32));
      uint32_t* out = words + 4 * (i + 8 * g);
      _mm512_storeu_si512(out, _mm512_permutex2var_epi64(low, first_half, high));
      _mm512_storeu_si512(out + 16, _mm512_permutex2var_epi64(low, second_half, high));
    }
  }
  philox_blocks_scalar(key, first_counter + static_cast<uint64_t>(i), count - i, words + 4 * i);
}

}  // namespace nrt::random::detail
