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

namespace nrt::exec::cpu {
// Internal linkage: float_activation_loops_avx2.cc compiles these for AVX2, and its copies must
// never stand in for the baseline ones (one definition per translation unit, not per program).
namespace {

// exp(x) = 2^n * exp(r), n = round(x / ln 2), |r| <= ln(2) / 2, exp(r) by a degree-6 polynomial
// (Cephes' expf coefficients). 2^n is built in the exponent bits as two halves, so that n may
// reach 128 (overflowing to inf, as exp does) and -150 (denormal results, then 0).
inline float fast_exp(float x) {
  // A NaN goes through the polynomial as 0 (converting NaN to int is undefined: UBSan's finding)
  // and comes back as itself below.
  const float number = x == x ? x : 0.0f;
  const float clamped = number < -104.0f ? -104.0f : (number > 89.0f ? 89.0f : number);
  // Round to nearest with the 1.5 * 2^23 trick: no call, no branch.
  const float n = (clamped * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (clamped - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = p * r * r + r + 1.0f;
  const int32_t k = static_cast<int32_t>(n);
  const int32_t half = k / 2;
  const float low = std::bit_cast<float>(static_cast<int32_t>((half + 127) << 23));
  const float high = std::bit_cast<float>(static_cast<int32_t>((k - half + 127) << 23));
  const float y = er * low * high;
  return x != x ? x : y;  // NaN in, NaN out
}

// tanh: an odd polynomial below |x| = 0.625 (Cephes' tanhf), 1 - 2 / (exp(2|x|) + 1) above it.
inline float fast_tanh(float x) {
  const float a = std::fabs(x);
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float large = 1.0f - 2.0f / (fast_exp(2.0f * a) + 1.0f);
  const float signed_large = x < 0.0f ? -large : large;
  return a < 0.625f ? small : signed_large;
}

// erfc(z) for z >= 0 with relative error below 1.2e-7 (the Chebyshev-fitted form of Numerical
// Recipes' erfcc): t * exp(-z^2 + P(t)), t = 1 / (1 + z / 2).
inline float fast_erfc_nonnegative(float z) {
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  return t * fast_exp(p - z * z);
}

// gelu(x) = x / 2 * (1 + erf(x / sqrt 2)) = x / 2 * erfc(-x / sqrt 2): erfc keeps the relative
// accuracy in the negative tail, where 1 + erf cancels.
inline float fast_gelu(float x) {
  const float e = fast_erfc_nonnegative(std::fabs(x) * 0.70710678118654752f);
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
