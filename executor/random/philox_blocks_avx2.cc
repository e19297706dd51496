// philox_blocks for AVX2: eight counters per step, one 32-bit lane each. _mm256_mul_epu32
// multiplies the even lanes only, so each round multiplies the even and the odd lanes separately
// and blends the halves back into place.
#include <immintrin.h>

#include "executor/random/philox.h"
#include "executor/random/philox_blocks.h"

namespace nrt::random::detail {
namespace {

struct Products {
  __m256i hi;
  __m256i lo;
};

// hi and lo halves of m * x for each 32-bit lane.
inline Products multiply(__m256i x, __m256i m) {
  const __m256i even = _mm256_mul_epu32(x, m);
  const __m256i odd = _mm256_mul_epu32(_mm256_srli_epi64(x, 32), m);
  return {_mm256_blend_epi32(_mm256_srli_epi64(even, 32), odd, 0xAA),
          _mm256_blend_epi32(even, _mm256_slli_epi64(odd, 32), 0xAA)};
}

}  // namespace

// Kernel state of `kGroups` independent groups of 8 blocks: one group alone would wait on each
// round's multiply (about 5 cycles, ten rounds in a row); interleaved groups keep the multiplier busy.
constexpr int kGroups = 3;
constexpr int64_t kStep = 8 * kGroups;

void philox_blocks_avx2(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words) {
  const __m256i m0 = _mm256_set1_epi32(static_cast<int>(kPhiloxM0));
  const __m256i m1 = _mm256_set1_epi32(static_cast<int>(kPhiloxM1));
  const __m256i w0 = _mm256_set1_epi32(static_cast<int>(kPhiloxW0));
  const __m256i w1 = _mm256_set1_epi32(static_cast<int>(kPhiloxW1));
  const PhiloxKey k = philox_key(key);
  int64_t i = 0;
  for (; i + kStep <= count; i += kStep) {
    alignas(32) uint32_t low[kStep], high[kStep];
    for (int lane = 0; lane < kStep; ++lane) {
      const uint64_t counter = first_counter + static_cast<uint64_t>(i + lane);
      low[lane] = static_cast<uint32_t>(counter);
      high[lane] = static_cast<uint32_t>(counter >> 32);
    }
    __m256i c0[kGroups], c1[kGroups], c2[kGroups], c3[kGroups];
    for (int g = 0; g < kGroups; ++g) {
      c0[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(low + 8 * g));
      c1[g] = _mm256_load_si256(reinterpret_cast<const __m256i*>(high + 8 * g));
      c2[g] = _mm256_setzero_si256();
      c3[g] = _mm256_setzero_si256();
    }
    __m256i k0 = _mm256_set1_epi32(static_cast<int>(k.k0));
    __m256i k1 = _mm256_set1_epi32(static_cast<int>(k.k1));
    for (int round = 0; round < kPhiloxRounds; ++round) {
      if (round > 0) {
        k0 = _mm256_add_epi32(k0, w0);
        k1 = _mm256_add_epi32(k1, w1);
      }
      for (int g = 0; g < kGroups; ++g) {
        const Products p0 = multiply(c0[g], m0);
        const Products p1 = multiply(c2[g], m1);
        c0[g] = _mm256_xor_si256(_mm256_xor_si256(p1.hi, c1[g]), k0);
        c1[g] = p1.lo;
        c2[g] = _mm256_xor_si256(_mm256_xor_si256(p0.hi, c3[g]), k1);
        c3[g] = p0.lo;
      }
    }
    for (int g = 0; g < kGroups; ++g) {
      // Word-major (c0 holds word 0 of 8 blocks) to block-major: a 4x8 transpose.
      const __m256i t0 = _mm256_unpacklo_epi32(c0[g], c1[g]);
      const __m256i t1 = _mm256_unpackhi_epi32(c0[g], c1[g]);
      const __m256i t2 = _mm256_unpacklo_epi32(c2[g], c3[g]);
      const __m256i t3 = _mm256_unpackhi_epi32(c2[g], c3[g]);
      const __m256i b04 = _mm256_unpacklo_epi64(t0, t2);  // blocks 0 and 4
      const __m256i b15 = _mm256_unpackhi_epi64(t0, t2);
      const __m256i b26 = _mm256_unpacklo_epi64(t1, t3);
      const __m256i b37 = _mm256_unpackhi_epi64(t1, t3);
      __m256i* out = reinterpret_cast<__m256i*>(words + 4 * (i + 8 * g));
      _mm256_storeu_si256(out + 0, _mm256_permute2x128_si256(b04, b15, 0x20));
      _mm256_storeu_si256(out + 1, _mm256_permute2x128_si256(b26, b37, 0x20));
      _mm256_storeu_si256(out + 2, _mm256_permute2x128_si256(b04, b15, 0x31));
      _mm256_storeu_si256(out + 3, _mm256_permute2x128_si256(b26, b37, 0x31));
    }
  }
  philox_blocks_scalar(key, first_counter + static_cast<uint64_t>(i), count - i, words + 4 * i);
}

}  // namespace nrt::random::detail
