// Sleef's AVX-512 exp, tanh and erf-gelu over n floats (n a multiple of 16), in a file of their own
// built with -mavx512f (bench/libraries/compare.sh): library_compare.cc is built for AVX2 and calls
// these only on a CPU with AVX-512.
#pragma once

#include <cstddef>

void sleef_avx512_exp(const float* x, float* y, size_t n);
void sleef_avx512_tanh(const float* x, float* y, size_t n);
void sleef_avx512_gelu(const float* x, float* y, size_t n);  // x/2 (1 + erf(x / sqrt 2))
