#include "executor/kernels/cpu/float_activation_loops.h"

#include "executor/kernels/cpu/float_activation_loops_body.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

namespace detail {
void float_activation_baseline(FloatActivation op, float* y, const float* x, int64_t n) {
  float_activation_body(op, y, x, n);
}
}  // namespace detail

void run_float_activation(FloatActivation op, float* y, const float* x, int64_t n) {
  static const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  static const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  // Elements are independent: large activations split over the intra-op threads.
  parallel_for(n, int64_t{1} << 14, [&](int64_t begin, int64_t end) {
    if (avx512) {
      detail::float_activation_avx512(op, y + begin, x + begin, end - begin);
    } else if (avx2) {
      detail::float_activation_avx2(op, y + begin, x + begin, end - begin);
    } else {
      detail::float_activation_baseline(op, y + begin, x + begin, end - begin);
    }
  });
}

float shifted_exponentials(float* y, const float* x, float shift, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] - shift;
  run_float_activation(FloatActivation::kExp, y, y, n);
  float total = 0;
  for (int64_t i = 0; i < n; ++i) total += y[i];
  return total;
}

}  // namespace nrt::exec::cpu
