// Branch-free float32 exp, tanh and gelu that the element-wise loops vectorise (glibc's expf and tanhf
// are calls per element, 5-10 ns each: 12x slower than torch's vectorised ones on activations).
// Accuracy: exp within 2 ulp (denormal results within 2^-149), inf above 88.72 and 0 below -103.9
// as exp; tanh within 3 ulp, +-1 at the ends; gelu within 4e-7 relative, in its negative tail
// within 4e-7 * x^2 / 2 (the rounding of x^2 / 2 in float, its conditioning); NaN stays NaN. The loops vectorise only with
// -fno-trapping-math (executor/kernels/cpu/BUILD.bazel): the selects here are then branch-free.
// Double keeps the C library (its users ask for precision, not speed).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__SSE__)
#include <immintrin.h>
#endif

namespace nrt::exec::cpu {
// Internal linkage: float_activation_loops_avx2.cc compiles these for AVX2, and its copies must
// never stand in for the baseline ones (one definition per translation unit, not per program).
namespace {

// Each function below is written once for a float and for GCC's generic vectors of floats (the
// activation loops run them on whole vectors: float_activation_loops_body.h). Written on vectors,
// a one-sided select `x < c ? c : x` is maxps, where the compiler's own vectorisation of the float
// version kept compares and blends (Zen 1 runs a 256-bit blend as two µops; they were half the
// exp loop).
typedef float Floats4 __attribute__((vector_size(16)));
typedef float Floats8 __attribute__((vector_size(32)));
typedef float Floats16 __attribute__((vector_size(64)));

// The integer lanes of a float type: its bit patterns (unsigned: wrapping is defined) and signed
// lanes for arithmetic shifts.
template <class T>
struct LaneBits;
template <>
struct LaneBits<float> {
  using Unsigned = uint32_t;
  using Signed = int32_t;
};
template <>
struct LaneBits<Floats4> {
  typedef uint32_t Unsigned __attribute__((vector_size(16)));
  typedef int32_t Signed __attribute__((vector_size(16)));
};
template <>
struct LaneBits<Floats8> {
  typedef uint32_t Unsigned __attribute__((vector_size(32)));
  typedef int32_t Signed __attribute__((vector_size(32)));
};
template <>
struct LaneBits<Floats16> {
  typedef uint32_t Unsigned __attribute__((vector_size(64)));
  typedef int32_t Signed __attribute__((vector_size(64)));
};

// x clamped to [low, high] lane by lane as x86's maxps then minps (max(a, b) = a > b ? a : b, so b
// where either is NaN: a NaN x stays NaN). Spelled as intrinsics because GCC keeps a compare and
// a blend for a select against a constant.
template <class T>
T clamp_lanes(T x, T low, T high) {
#if defined(__AVX512F__)
  // The masked forms: GCC 12's unmasked ones read an undefined register and warn.
  if constexpr (std::is_same_v<T, Floats16>) {
    return _mm512_mask_min_ps(high, 0xffff, high, _mm512_mask_max_ps(low, 0xffff, low, x));
  }
#endif
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, Floats8>) return _mm256_min_ps(high, _mm256_max_ps(low, x));
#endif
#if defined(__SSE__)
  if constexpr (std::is_same_v<T, Floats4>) return _mm_min_ps(high, _mm_max_ps(low, x));
#endif
  const T above = low > x ? low : x;
  return high < above ? high : above;
}

// c in every lane.
template <class T>
T splat(float c) {
  return T{} + c;
}

template <class T>
T abs_of(T x) {
  using U = typename LaneBits<T>::Unsigned;
  return std::bit_cast<T>(std::bit_cast<U>(x) & 0x7fffffffu);
}

// exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln(2) / 2, exp(r) by a degree-6 polynomial
// (Cephes' expf coefficients). 2^n is built in the exponent bits as two halves (AVX-512 vectors
// scale by it instead), so that n may reach 128 (overflowing to inf, as exp does) and -150
// (denormal results, then 0). No compare and
// no float-to-int conversion (undefined for NaN): the clamps let a NaN through, n comes out of the
// rounding's bits, and a NaN flows on to the result.
template <class T>
T fast_exp(T x) {
  using U = typename LaneBits<T>::Unsigned;
  using S = typename LaneBits<T>::Signed;
  const T lowest = splat<T>(-104.0f), highest = splat<T>(89.0f);
  const T clamped = clamp_lanes(x, lowest, highest);
  // Round to nearest with the 1.5 * 2^23 trick: no call, no branch; the sum's low mantissa bits
  // hold n as an integer.
  const float magic = 12582912.0f;
  const T shifted = clamped * 1.44269504088896341f + magic;
  const T n = shifted - magic;
  const T r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  T p = splat<T>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const T er = p * r * r + r + 1.0f;
#if defined(__AVX512F__)
  // vscalefps: er * 2^n rounded once, as the two exact halves below round (the same bits for every
  // float input, NaN's included; compared exhaustively), in one instruction where the bits take ten.
  if constexpr (std::is_same_v<T, Floats16>) return _mm512_mask_scalef_ps(er, 0xffff, er, n);
#endif
  const U k = std::bit_cast<U>(shifted) - std::bit_cast<uint32_t>(magic);
  const U half = std::bit_cast<U>(std::bit_cast<S>(k) >> 1);
  const T low = std::bit_cast<T>((half + 127u) << 23);
  const T high = std::bit_cast<T>((k - half + 127u) << 23);
  return er * low * high;
}

// tanh: an odd polynomial below |x| = 0.625 (Cephes' tanhf), 1 - 2 / (exp(2|x|) + 1) above it.
template <class T>
T fast_tanh(T x) {
  using U = typename LaneBits<T>::Unsigned;
  const T a = abs_of(x);
  const T z = x * x;
  T p = splat<T>(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const T small = p * z * x + x;
  const T large = 1.0f - 2.0f / (fast_exp<T>(2.0f * a) + 1.0f);
  // large >= 0: x's sign bit makes it -large where x < 0.
  const T signed_large = std::bit_cast<T>(std::bit_cast<U>(large) | (std::bit_cast<U>(x) & 0x80000000u));
  return a < 0.625f ? small : signed_large;
}

// erfc(z) for z >= 0 with relative error below 1.2e-7 (the Chebyshev-fitted form of Numerical
// Recipes' erfcc): t * exp(-z^2 + P(t)), t = 1 / (1 + z / 2).
template <class T>
T fast_erfc_nonnegative(T z) {
  const T t = 1.0f / (1.0f + 0.5f * z);
  // Estrin's scheme: pairs, then pairs of pairs, a chain of 5 multiply-adds where Horner's was 9
  // (the loop is latency-bound on Zen 1: its reorder buffer holds about two vectors' worth).
  const T t2 = t * t, t4 = t2 * t2, t8 = t4 * t4;
  const T c01 = -1.26551223f + t * 1.00002368f, c23 = 0.37409196f + t * 0.09678418f;
  const T c45 = -0.18628806f + t * 0.27886807f, c67 = -1.13520398f + t * 1.48851587f;
  const T c89 = -0.82215223f + t * 0.17087277f;
  const T low = (c01 + t2 * c23) + t4 * (c45 + t2 * c67);
  const T p = low + t8 * c89;
  return t * fast_exp<T>(p - z * z);
}

// gelu(x) = x / 2 * (1 + erf(x / sqrt 2)) = x / 2 * erfc(-x / sqrt 2): erfc keeps the relative
// accuracy in the negative tail, where 1 + erf cancels.
template <class T>
T fast_gelu(T x) {
  const T e = fast_erfc_nonnegative<T>(abs_of(x) * 0.70710678118654752f);
  return 0.5f * x * (x < 0.0f ? e : 2.0f - e);
}

// The versions the kernels call: fast for float (and the reduced floats computed as float).
template <class C>
C exp_of(C x) {
  if constexpr (std::is_same_v<C, float>) return fast_exp(x);
  return std::exp(x);
}

template <class C>
C tanh_of(C x) {
  if constexpr (std::is_same_v<C, float>) return fast_tanh(x);
  return std::tanh(x);
}

}  // namespace
}  // namespace nrt::exec::cpu
