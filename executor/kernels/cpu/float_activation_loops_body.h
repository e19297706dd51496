// The body of the float activation loops, included once per instruction set
// (float_activation_loops.cc, float_activation_loops_avx2.cc). Each loop is a plain indexed loop
// over GCC's generic vectors of this build's width (fast_math.h writes each function for them).
#pragma once

#include <cstdint>
#include <cstring>
#include <numbers>

#include "executor/kernels/cpu/fast_math.h"
#include "executor/kernels/cpu/float_activation_loops.h"

namespace nrt::exec::cpu {
namespace {

// The widest vector of this build's instruction set (each including file has its own flags).
#if defined(__AVX512F__)
using FloatLanes = Floats16;
#elif defined(__AVX__)
using FloatLanes = Floats8;
#else
using FloatLanes = Floats4;
#endif

// f runs on whole vectors, then on the last n % lanes elements one at a time. Each vector is
// loaded before it is stored, so y may be x.
template <class F>
void map_floats(float* y, const float* x, int64_t n, F f) {
  constexpr int64_t kLanes = sizeof(FloatLanes) / sizeof(float);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    FloatLanes v;
    std::memcpy(&v, x + i, sizeof v);
    const FloatLanes r = f(v);
    std::memcpy(y + i, &r, sizeof r);
  }
  for (; i < n; ++i) y[i] = f(x[i]);
}

// The SiLU below, times up: each vector loaded before it is stored, so y may be gate or up.
void silu_products_body(float* y, const float* gate, const float* up, int64_t n) {
  auto silu = [](auto v) { return v / (1.0f + fast_exp(-v)); };
  constexpr int64_t kLanes = sizeof(FloatLanes) / sizeof(float);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    FloatLanes v, w;
    std::memcpy(&v, gate + i, sizeof v);
    std::memcpy(&w, up + i, sizeof w);
    const FloatLanes r = silu(v) * w;
    std::memcpy(y + i, &r, sizeof r);
  }
  for (; i < n; ++i) y[i] = silu(gate[i]) * up[i];
}

void float_activation_body(FloatActivation op, float* y, const float* x, int64_t n) {
  const float k = static_cast<float>(std::numbers::sqrt2 * std::numbers::inv_sqrtpi);  // sqrt(2/pi)
  switch (op) {
    case FloatActivation::kExp:
      return map_floats(y, x, n, [](auto v) { return fast_exp(v); });
    case FloatActivation::kSigmoid:
      return map_floats(y, x, n, [](auto v) { return 1.0f / (1.0f + fast_exp(-v)); });
    case FloatActivation::kSilu:
      return map_floats(y, x, n, [](auto v) { return v / (1.0f + fast_exp(-v)); });
    case FloatActivation::kTanh:
      return map_floats(y, x, n, [](auto v) { return fast_tanh(v); });
    case FloatActivation::kGelu:
      return map_floats(y, x, n, [](auto v) { return fast_gelu(v); });
    case FloatActivation::kGeluTanh:
      return map_floats(y, x, n, [k](auto v) { return 0.5f * v * (1.0f + fast_tanh(k * (v + 0.044715f * v * v * v))); });
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
