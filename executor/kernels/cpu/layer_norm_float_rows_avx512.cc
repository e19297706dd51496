// layer_norm_float_rows.h's loops for AVX-512 (this file alone is compiled with -mavx512f and
// 512-bit vectors preferred, without contracting into FMAs: executor/kernels/cpu/BUILD.bazel).
#include "executor/kernels/cpu/layer_norm_float_rows.h"
#include "executor/kernels/cpu/layer_norm_float_rows_body.h"

namespace nrt::exec::cpu::avx512 {

void layer_norm_float_rows(const float* x, float* y, const float* weight, const float* bias, int64_t rows,
                           int64_t columns, double eps, float* mean_out, float* rstd_out) {
  layer_norm_float_rows_body(x, y, weight, bias, rows, columns, eps, mean_out, rstd_out);
}

}  // namespace nrt::exec::cpu::avx512
