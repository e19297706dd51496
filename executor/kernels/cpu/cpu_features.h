// What the CPU running nrt offers, for the kernels built with wider instructions than the
// baseline (the *_avx2.cc and *_avx512.cc libraries, executor/kernels/cpu/BUILD.bazel): each is
// called only where the CPU has what its library was compiled with.
#pragma once

namespace nrt::exec::cpu {

// AVX2 and FMA: what the -mavx2 -mfma libraries are compiled with.
inline bool cpu_has_avx2_fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

// AVX-512 F beside AVX2 and FMA: what the -mavx512f libraries are compiled with (AVX2_COPTS too).
inline bool cpu_has_avx512f() {
  static const bool has = cpu_has_avx2_fma() && __builtin_cpu_supports("avx512f");
  return has;
}

}  // namespace nrt::exec::cpu
