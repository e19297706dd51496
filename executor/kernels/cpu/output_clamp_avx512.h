// output_clamp.h's clamp in AVX-512 registers, for the kernels built with AVX-512 F.
#pragma once

#include <immintrin.h>

#include "executor/kernels/cpu/output_clamp.h"

namespace nrt::exec::cpu::avx512 {

// max(lo, v) and min(hi, v) return v where v is NaN, so a NaN stays one, as torch's relu and
// hardtanh keep it.
struct Clamp {
  explicit Clamp(const OutputClamp& c) : on(c.on), lo(_mm512_set1_ps(c.lo)), hi(_mm512_set1_ps(c.hi)) {}
  __m512 operator()(__m512 v) const { return on ? _mm512_min_ps(hi, _mm512_max_ps(lo, v)) : v; }
  bool on;
  __m512 lo, hi;
};

}  // namespace nrt::exec::cpu::avx512
