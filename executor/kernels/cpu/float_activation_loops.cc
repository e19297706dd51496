#include "executor/kernels/cpu/float_activation_loops.h"

#include <cstring>
#include <limits>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/kernels/cpu/float_activation_loops_body.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

namespace detail {
void float_activation_baseline(FloatActivation op, float* y, const float* x, int64_t n) {
  float_activation_body(op, y, x, n);
}
void silu_products_baseline(float* y, const float* gate, const float* up, int64_t n) { silu_products_body(y, gate, up, n); }
}  // namespace detail

namespace {

// Elements are independent: activations of 8k elements and up split over the intra-op threads.
// A part of 4k elements is 4 to 15 us of work (exp to gelu on AVX2), several times what starting
// and joining a warm OpenMP team costs (about 1 us); at 16k a part, whisper_encoder_tiny's gelus
// (8k to 16k elements) stayed on one thread.
constexpr int64_t kPart = int64_t{1} << 12;

// The widest build this CPU runs: 2 AVX-512, 1 AVX2 with FMA, 0 baseline. Asked once, at the first
// call (not at static initialisation, before the CPU model is read).
int widest_build() {
  static const int build = cpu_has_avx512f() && __builtin_cpu_supports("avx512dq") ? 2 : cpu_has_avx2_fma() ? 1 : 0;
  return build;
}

}  // namespace

void run_float_activation(FloatActivation op, float* y, const float* x, int64_t n) {
  static constexpr decltype(&detail::float_activation_baseline) kBuilds[] = {
      &detail::float_activation_baseline, &detail::float_activation_avx2, &detail::float_activation_avx512};
  const auto run = kBuilds[widest_build()];
  parallel_for(n, kPart, [&](int64_t begin, int64_t end) { run(op, y + begin, x + begin, end - begin); });
}

void silu_products(float* y, const float* gate, const float* up, int64_t n) {
  static constexpr decltype(&detail::silu_products_baseline) kBuilds[] = {
      &detail::silu_products_baseline, &detail::silu_products_avx2, &detail::silu_products_avx512};
  const auto run = kBuilds[widest_build()];
  parallel_for(n, kPart, [&](int64_t begin, int64_t end) { run(y + begin, gate + begin, up + begin, end - begin); });
}

namespace {

float lane_sum(const float* y, int64_t n) {
  constexpr int64_t kLanes = 8;
  float lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t k = 0; k < kLanes; ++k) lanes[k] += y[i + k];
  }
  for (int64_t k = 0; i + k < n; ++k) lanes[k] += y[i + k];
  float total = 0;
  for (float lane : lanes) total += lane;
  return total;
}

}  // namespace

void shifted_exponentials(float* y, const float* x, const float* shifts, int64_t rows, int64_t n, float* sums) {
  for (int64_t r = 0; r < rows; ++r) {
    const float shift = shifts[r];
    for (int64_t i = r * n; i < (r + 1) * n; ++i) y[i] = x[i] - shift;
  }
  run_float_activation(FloatActivation::kExp, y, y, rows * n);
  for (int64_t r = 0; r < rows; ++r) sums[r] = lane_sum(y + r * n, n);
}

float maximum_of(const float* x, int64_t n) {
  // GCC's generic vectors, 4 lanes (SSE2's, so every x86-64 build runs them), two accumulators:
  // plain loops over a select do not vectorise without -ffinite-math-only. `v > m ? v : m` is
  // maxps and never selects a NaN, which is flagged apart.
  typedef float Lanes __attribute__((vector_size(16)));
  typedef int32_t Flags __attribute__((vector_size(16)));
  const float minus_inf = -std::numeric_limits<float>::infinity();
  Lanes first = {minus_inf, minus_inf, minus_inf, minus_inf}, second = first;
  Flags nan = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    Lanes a, b;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, x + i + 4, sizeof b);
    first = a > first ? a : first;
    second = b > second ? b : second;
    nan |= (a != a) | (b != b);
  }
  float maximum = minus_inf;
  bool any_nan = false;
  for (int k = 0; k < 4; ++k) {
    maximum = first[k] > maximum ? first[k] : maximum;
    maximum = second[k] > maximum ? second[k] : maximum;
    any_nan = any_nan || nan[k] != 0;
  }
  for (; i < n; ++i) {
    maximum = x[i] > maximum ? x[i] : maximum;
    any_nan = any_nan || x[i] != x[i];
  }
  return any_nan ? std::numeric_limits<float>::quiet_NaN() : maximum;
}

double maximum_of(const double* x, int64_t n) {
  double maximum = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) {
    if (x[i] != x[i]) return x[i];
    maximum = x[i] > maximum ? x[i] : maximum;
  }
  return maximum;
}

}  // namespace nrt::exec::cpu
