#include "bench/libraries/sleef_avx512.h"

#include <immintrin.h>
#include <sleef.h>

void sleef_avx512_exp(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(y + i, Sleef_expf16_u10avx512f(_mm512_loadu_ps(x + i)));
}

void sleef_avx512_tanh(const float* x, float* y, size_t n) {
  for (size_t i = 0; i < n; i += 16) _mm512_storeu_ps(y + i, Sleef_tanhf16_u10avx512f(_mm512_loadu_ps(x + i)));
}

void sleef_avx512_gelu(const float* x, float* y, size_t n) {
  const __m512 half = _mm512_set1_ps(0.5f), one = _mm512_set1_ps(1.0f), r2 = _mm512_set1_ps(0.70710678f);
  for (size_t i = 0; i < n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    const __m512 e = Sleef_erff16_u10avx512f(_mm512_mul_ps(v, r2));
    _mm512_storeu_ps(y + i, _mm512_mul_ps(_mm512_mul_ps(half, v), _mm512_add_ps(one, e)));
  }
}
