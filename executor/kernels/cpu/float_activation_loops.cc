#include "executor/kernels/cpu/float_activation_loops.h"

#include "executor/kernels/cpu/float_activation_loops_body.h"

namespace nrt::exec::cpu {

namespace detail {
void float_activation_baseline(FloatActivation op, float* y, const float* x, int64_t n) {
  float_activation_body(op, y, x, n);
}
}  // namespace detail

void run_float_activation(FloatActivation op, float* y, const float* x, int64_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (avx2) {
    detail::float_activation_avx2(op, y, x, n);
  } else {
    detail::float_activation_baseline(op, y, x, n);
  }
}

}  // namespace nrt::exec::cpu
