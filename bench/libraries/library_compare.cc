// The libraries issue 30 asks to choose between, measured in one process on the same data, one
// thread each (bench/libraries/compare.sh builds and runs it, by hand: oneDNN, Sleef and the
// PyPI OpenBLAS are not CI dependencies). Prints GFLOP/s (products) or Gelem/s (element-wise) and
// each against what nrt does now, plus the core's peak and how it was derived.
//
//   GEMM / GEMV: Debian's OpenBLAS 0.3.21 (what nrt calls: executor/kernels/cpu/gemm.cc), OpenBLAS
//     0.3.34 from PyPI's scipy-openblas32 (dlopen'ed: its symbols carry a scipy_ prefix), oneDNN
//     (Debian's libdnnl 2.6, dnnl_sgemm).
//   exp, tanh, erf-gelu over 1M floats: std:: loops, nrt's own loops (float_activation_loops: the
//     build run_float_activation picks on this CPU, and the AVX2 build), Sleef 3.5 (AVX-512 and AVX2).
#include <dlfcn.h>
#include <immintrin.h>
#include <sleef.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include "bench/cpu_peak.h"
#include "bench/libraries/sleef_avx512.h"

#include "executor/kernels/cpu/float_activation_loops.h"

namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of `reps` timed calls after one warm-up.
double median_seconds(const std::function<void()>& f, int reps) {
  f();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    const auto start = Clock::now();
    f();
    t.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

std::vector<float> noise(size_t n, uint32_t seed) {
  std::vector<float> v(n);
  for (auto& x : v) {
    seed = seed * 1664525u + 1013904223u;
    x = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return v;
}

using Sgemm = void (*)(int, int, int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using Sgemv = void (*)(int, int, int, int, float, const float*, int, const float*, int, float, float*, int);
using SetThreads = void (*)(int);
}  // namespace

int main(int argc, char** argv) {
  const bool smoke = argc > 1 && std::string(argv[1]) == "--smoke";
  const int reps = smoke ? 3 : 15;
  openblas_set_num_threads(1);
  void* scipy = dlopen(std::getenv("SCIPY_OPENBLAS") ? std::getenv("SCIPY_OPENBLAS") : "libscipy_openblas.so",
                       RTLD_NOW | RTLD_LOCAL);
  Sgemm scipy_sgemm = scipy ? reinterpret_cast<Sgemm>(dlsym(scipy, "scipy_cblas_sgemm")) : nullptr;
  Sgemv scipy_sgemv = scipy ? reinterpret_cast<Sgemv>(dlsym(scipy, "scipy_cblas_sgemv")) : nullptr;
  if (scipy) {
    if (auto set = reinterpret_cast<SetThreads>(dlsym(scipy, "scipy_openblas_set_num_threads"))) set(1);
  } else {
    std::printf("note: %s; the OpenBLAS 0.3.34 column is empty\n", dlerror());
  }

  const nrt::bench::CpuPeak core = nrt::bench::float32_core_peak();
  const double peak = core.gflops;
  std::printf("core peak: %s\n\n", core.derivation.c_str());

  struct Shape {
    const char* what;
    int m, n, k;
  };
  const Shape shapes[] = {
      {"BERT-base linear, seq 128 (128x768 @ 768x768)", 128, 768, 768},
      {"BERT-base FFN up (128x768 @ 768x3072)", 128, 3072, 768},
      {"resnet conv 3x3 64->64 at 56x56 as GEMM (64x576 @ 576x3136)", 64, 3136, 576},
      {"square 512", 512, 512, 512},
      {"batch-1 linear 9216->4096 (1x9216 @ 9216x4096)", 1, 4096, 9216},
  };
  std::printf("%-62s %14s %14s %10s %7s %7s %7s\n", "GEMM, GFLOP/s (1 thread)", "OpenBLAS0.3.21", "OpenBLAS0.3.34",
              "oneDNN2.6", "34/21", "dnnl/21", "21/peak");
  for (const auto& s : shapes) {
    const auto a = noise(size_t(s.m) * s.k, 1), b = noise(size_t(s.k) * s.n, 2);
    std::vector<float> c(size_t(s.m) * s.n);
    const double flops = 2.0 * s.m * s.n * s.k;
    const int r = s.m == 1 ? reps * 2 : reps;
    const double debian = median_seconds(
        [&] {
          if (s.m == 1) {
            cblas_sgemv(CblasRowMajor, CblasTrans, s.k, s.n, 1.0f, b.data(), s.n, a.data(), 1, 0.0f, c.data(), 1);
          } else {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n,
                        0.0f, c.data(), s.n);
          }
        },
        r);
    double current = 0;
    if (scipy_sgemm) {
      current = median_seconds(
          [&] {
            if (s.m == 1 && scipy_sgemv) {
              scipy_sgemv(CblasRowMajor, CblasTrans, s.k, s.n, 1.0f, b.data(), s.n, a.data(), 1, 0.0f, c.data(), 1);
            } else {
              scipy_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(),
                          s.n, 0.0f, c.data(), s.n);
            }
          },
          r);
    }
    const double dnnl = median_seconds(
        [&] { dnnl_sgemm('N', 'N', s.m, s.n, s.k, 1.0f, a.data(), s.k, b.data(), s.n, 0.0f, c.data(), s.n); }, r);
    auto g = [&](double t) { return t > 0 ? flops / t / 1e9 : 0.0; };
    std::printf("%-62s %14.1f %14.1f %10.1f %7.2f %7.2f %7.2f\n", s.what, g(debian), g(current), g(dnnl),
                current > 0 ? debian / current : 0.0, debian / dnnl, g(debian) / peak);
  }
  std::printf("(batch-1 rows: sgemv for both OpenBLAS builds, as nrt routes them; oneDNN has sgemm only)\n\n");

  const size_t n = size_t(1) << 20;
  const auto x = noise(n, 3);
  std::vector<float> y(n);
  using nrt::exec::cpu::FloatActivation;
  struct Elementwise {
    const char* what;
    std::function<void()> scalar, mine, mine_avx2, sleef512, sleef256;
  };
  // Sleef's AVX-512 loops (sleef_avx512.h) run only on CPUs that have it: the rest of the
  // benchmark is AVX2, so it runs everywhere nrt's loops do (the AVX-512 column reads 0 elsewhere).
  const bool avx512 = __builtin_cpu_supports("avx512f");
  auto sleef16 = [&](void (*f)(const float*, float*, size_t)) -> std::function<void()> {
    if (!avx512) return nullptr;
    return [&, f] { f(x.data(), y.data(), n); };
  };
  auto sleef8 = [&](const __m256 (*f)(__m256)) {
    return [&, f] {
      for (size_t i = 0; i < n; i += 8) _mm256_storeu_ps(y.data() + i, f(_mm256_loadu_ps(x.data() + i)));
    };
  };
  // erf-gelu through Sleef's erf: x/2 (1 + erf(x / sqrt 2)).
  auto gelu8 = [&] {
    const __m256 half = _mm256_set1_ps(0.5f), one = _mm256_set1_ps(1.0f), r2 = _mm256_set1_ps(0.70710678f);
    for (size_t i = 0; i < n; i += 8) {
      const __m256 v = _mm256_loadu_ps(x.data() + i);
      const __m256 e = Sleef_erff8_u10avx2(_mm256_mul_ps(v, r2));
      _mm256_storeu_ps(y.data() + i, _mm256_mul_ps(_mm256_mul_ps(half, v), _mm256_add_ps(one, e)));
    }
  };
  const Elementwise ops[] = {
      {"exp", [&] { for (size_t i = 0; i < n; ++i) y[i] = std::exp(x[i]); },
       [&] { nrt::exec::cpu::run_float_activation(FloatActivation::kExp, y.data(), x.data(), int64_t(n)); },
       [&] { nrt::exec::cpu::detail::float_activation_avx2(FloatActivation::kExp, y.data(), x.data(), int64_t(n)); },
       sleef16(sleef_avx512_exp), sleef8(Sleef_expf8_u10avx2)},
      {"tanh", [&] { for (size_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]); },
       [&] { nrt::exec::cpu::run_float_activation(FloatActivation::kTanh, y.data(), x.data(), int64_t(n)); },
       [&] { nrt::exec::cpu::detail::float_activation_avx2(FloatActivation::kTanh, y.data(), x.data(), int64_t(n)); },
       sleef16(sleef_avx512_tanh), sleef8(Sleef_tanhf8_u10avx2)},
      {"gelu (erf)", [&] { for (size_t i = 0; i < n; ++i) y[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * 0.70710678f)); },
       [&] { nrt::exec::cpu::run_float_activation(FloatActivation::kGelu, y.data(), x.data(), int64_t(n)); },
       [&] { nrt::exec::cpu::detail::float_activation_avx2(FloatActivation::kGelu, y.data(), x.data(), int64_t(n)); },
       sleef16(sleef_avx512_gelu), gelu8},
  };
  std::printf("%-14s %8s %12s %12s %12s %12s %9s %9s\n", "1M floats, Gelem/s", "std::", "nrt (picked)", "nrt AVX2",
              "Sleef AVX512", "Sleef AVX2", "S512/nrt", "S256/nrt");
  for (const auto& op : ops) {
    const double s = median_seconds(op.scalar, reps), m = median_seconds(op.mine, reps),
                 m2 = median_seconds(op.mine_avx2, reps), a = op.sleef512 ? median_seconds(op.sleef512, reps) : 0.0,
                 b = median_seconds(op.sleef256, reps);
    auto g = [&](double t) { return n / t / 1e9; };
    std::printf("%-14s %8.2f %12.2f %12.2f %12.2f %12.2f %9.2f %9.2f\n", op.what, g(s), g(m), g(m2), a > 0 ? g(a) : 0.0,
                g(b), a > 0 ? m / a : 0.0, m / b);
  }
  return 0;
}
