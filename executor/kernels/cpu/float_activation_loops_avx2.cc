// The float activation loops for AVX2 + FMA (this file alone is compiled with -mavx2 -mfma:
// executor/kernels/cpu/BUILD.bazel); run_float_activation calls it only where the CPU has both.
#include "executor/kernels/cpu/float_activation_loops_body.h"

namespace nrt::exec::cpu::detail {

void float_activation_avx2(FloatActivation op, float* y, const float* x, int64_t n) {
  float_activation_body(op, y, x, n);
}

void silu_products_avx2(float* y, const float* gate, const float* up, int64_t n) { silu_products_body(y, gate, up, n); }

}  // namespace nrt::exec::cpu::detail
