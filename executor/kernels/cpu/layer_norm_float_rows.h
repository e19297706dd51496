// The float32 rows of a layer norm as torch's CPU kernel writes them: y = (x * rstd - mean * rstd) *
// weight + bias in float, vectorised, where the generic loop (normalization_kernels.cc) converts
// every element to double and back (a whisper layer norm of 64x128: 90 us). The statistics keep
// double sums: eight independent accumulators, so the compiler can vectorise them without
// reordering one sum. Built twice: for any x86-64 (normalization_kernels.cc) and for AVX-512
// (layer_norm_float_rows_avx512.cc), both without contracting a multiply and an add into one
// rounding (-ffp-contract=off there): the two give the same bits.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

// `rows` rows of `columns` floats; mean_out and rstd_out (one float a row) may be null.
void layer_norm_float_rows(const float* x, float* y, const float* weight, const float* bias, int64_t rows,
                           int64_t columns, double eps, float* mean_out, float* rstd_out);

namespace avx512 {
// The same, built for AVX-512 F: called only where cpu_has_avx512f() holds.
void layer_norm_float_rows(const float* x, float* y, const float* weight, const float* bias, int64_t rows,
                           int64_t columns, double eps, float* mean_out, float* rstd_out);
}  // namespace avx512

}  // namespace nrt::exec::cpu
