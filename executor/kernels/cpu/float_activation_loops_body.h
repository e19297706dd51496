// The body of the float activation loops, included once per instruction set
// (float_activation_loops.cc, float_activation_loops_avx2.cc). Each loop is a plain indexed loop
// over restrict pointers, which GCC vectorises at -O3 -fno-trapping-math.
#pragma once

#include <cstdint>
#include <numbers>

#include "executor/kernels/cpu/fast_math.h"
#include "executor/kernels/cpu/float_activation_loops.h"

namespace nrt::exec::cpu {
namespace {

// y and x are distinct arrays (a kernel's output never aliases its input); equal pointers, the
// one overlap an element-wise map allows, take the loop without restrict.
template <class F>
void float_loop(float* __restrict y, const float* __restrict x, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
}

template <class F>
void map_floats(float* y, const float* x, int64_t n, F f) {
  if (y == x) {
    for (int64_t i = 0; i < n; ++i) y[i] = f(x[i]);
  } else {
    float_loop(y, x, n, f);
  }
}

void float_activation_body(FloatActivation op, float* y, const float* x, int64_t n) {
  const float k = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
  switch (op) {
    case FloatActivation::kExp:
      return map_floats(y, x, n, [](float v) { return fast_exp(v); });
    case FloatActivation::kSigmoid:
      return map_floats(y, x, n, [](float v) { return 1.0f / (1.0f + fast_exp(-v)); });
    case FloatActivation::kSilu:
      return map_floats(y, x, n, [](float v) { return v / (1.0f + fast_exp(-v)); });
    case FloatActivation::kTanh:
      return map_floats(y, x, n, [](float v) { return fast_tanh(v); });
    case FloatActivation::kGelu:
      return map_floats(y, x, n, [](float v) { return fast_gelu(v); });
    case FloatActivation::kGeluTanh:
      return map_floats(y, x, n, [k](float v) { return 0.5f * v * (1.0f + fast_tanh(k * (v + 0.044715f * v * v * v))); });
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
