// Contiguous float32 loops of the activations built on fast_math.h, compiled twice: for baseline
// x86-64 (SSE2, 4 lanes) and for AVX2 with FMA (8 lanes, about 3x faster); the first call picks
// what this CPU runs. The unary kernels use them when input and output are contiguous float32.
// The two builds agree within an ulp (FMA rounds once where SSE2 rounds twice).
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

enum class FloatActivation { kExp, kSigmoid, kSilu, kTanh, kGelu, kGeluTanh };

void run_float_activation(FloatActivation op, float* y, const float* x, int64_t n);

// y = silu(gate) * up over n contiguous floats, SiLU rounded as run_float_activation's kSilu rounds
// it, then the product (the silu and mul nodes' bits in one pass; the gated feed-forward's). y may
// be gate or up.
void silu_products(float* y, const float* gate, const float* up, int64_t n);

// Softmax's numerators over `rows` contiguous rows of n elements: y = exp(x - shifts[r]) through
// one call of the exp loop above (called per row, its setup and dispatch were half the time of a
// 32-wide row), and sums[r] the row's sum (8 partial sums over every 8th element, then added in
// lane order: a fixed order that vectorises, where one running sum was a chain of dependent adds).
// y may be x.
void shifted_exponentials(float* y, const float* x, const float* shifts, int64_t rows, int64_t n, float* sums);

// The largest of n elements, NaN when any is NaN, -inf when n is 0 (softmax's shift); float32
// vectorised (the result does not depend on the order), float64 a plain loop for the kernels'
// double rows.
float maximum_of(const float* x, int64_t n);
double maximum_of(const double* x, int64_t n);

// The loops of each build (float_activation_loops_body.h); run_float_activation chooses.
namespace detail {
void float_activation_baseline(FloatActivation op, float* y, const float* x, int64_t n);
void float_activation_avx2(FloatActivation op, float* y, const float* x, int64_t n);
void float_activation_avx512(FloatActivation op, float* y, const float* x, int64_t n);
void silu_products_baseline(float* y, const float* gate, const float* up, int64_t n);
void silu_products_avx2(float* y, const float* gate, const float* up, int64_t n);
void silu_products_avx512(float* y, const float* gate, const float* up, int64_t n);
}  // namespace detail

}  // namespace nrt::exec::cpu
