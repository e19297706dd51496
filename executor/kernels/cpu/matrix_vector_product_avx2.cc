// matrix_vector_product.h's rows with AVX2 and FMA.
#include <immintrin.h>

#include "executor/kernels/cpu/matrix_vector_product.h"

namespace nrt::exec::cpu::avx2 {
namespace {

// Lanes [0, count) set, for the masked loads of a row's last cols % 8 elements.
__m256i first_lanes(int64_t count) {
  static const int kLanes[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kLanes + 8 - count));
}

float horizontal_sum(__m256 v) {
  const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

// kRows rows from `m` at once, one accumulator each. Every row's sum runs over the columns in the
// same order whatever kRows is, so a row's bits do not depend on which block computed it. Eight
// rows side by side streamed fastest (4: as oneDNN's sgemm; 12: between; a software prefetch
// ahead of the loads made it slower).
template <int kRows>
void block(int64_t cols, float alpha, const float* m, int64_t m_row, const float* v, float beta, float* y) {
  __m256 acc[kRows];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) acc[r] = _mm256_setzero_ps();
  int64_t p = 0;
  for (; p + 8 <= cols; p += 8) {
    const __m256 x = _mm256_loadu_ps(v + p);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) acc[r] = _mm256_fmadd_ps(_mm256_loadu_ps(m + r * m_row + p), x, acc[r]);
  }
  if (p < cols) {
    const __m256i mask = first_lanes(cols - p);
    const __m256 x = _mm256_maskload_ps(v + p, mask);
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) acc[r] = _mm256_fmadd_ps(_mm256_maskload_ps(m + r * m_row + p, mask), x, acc[r]);
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    const float sum = alpha * horizontal_sum(acc[r]);
    y[r] = beta == 0.0f ? sum : sum + beta * y[r];
  }
}

}  // namespace

void matrix_vector_rows(int64_t cols, float alpha, const float* m, int64_t m_row, const float* v, float beta, float* y,
                        int64_t begin, int64_t end) {
  constexpr int kRows = 8;
  int64_t i = begin;
  for (; i + kRows <= end; i += kRows) block<kRows>(cols, alpha, m + i * m_row, m_row, v, beta, y + i);
  for (; i < end; ++i) block<1>(cols, alpha, m + i * m_row, m_row, v, beta, y + i);
}

}  // namespace nrt::exec::cpu::avx2
