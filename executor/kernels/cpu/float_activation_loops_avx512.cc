// The float activation loops for AVX-512 (this file alone is compiled with -mavx512f -mavx512dq
// -mfma and 512-bit vectors preferred: executor/kernels/cpu/BUILD.bazel); run_float_activation
// calls it only where the CPU has AVX-512F and DQ. The same body as the AVX2 build, 16 lanes wide.
#include "executor/kernels/cpu/float_activation_loops_body.h"

namespace nrt::exec::cpu::detail {

void float_activation_avx512(FloatActivation op, float* y, const float* x, int64_t n) {
  float_activation_body(op, y, x, n);
}

void silu_products_avx512(float* y, const float* gate, const float* up, int64_t n) { silu_products_body(y, gate, up, n); }

}  // namespace nrt::exec::cpu::detail
