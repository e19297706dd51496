// Half (IEEE binary16) and BFloat16 as distinct element types, so that dtype dispatch can name
// them; the conversions are the executor's (executor/runtime/reduced_float.h: round to nearest even, NaN
// stays a quiet NaN). Kernels compute on them in float.
#pragma once

#include <cstdint>

#include "executor/runtime/reduced_float.h"

namespace nrt::exec::cpu {

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

inline float to_float(Half h) { return half_to_float(h.bits); }
inline float to_float(BFloat16 b) { return bfloat16_to_float(b.bits); }
inline Half half_from_float(float f) { return {float_to_half(f)}; }
inline BFloat16 bfloat16_from_float(float f) { return {float_to_bfloat16(f)}; }

}  // namespace nrt::exec::cpu
