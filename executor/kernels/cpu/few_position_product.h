// Float32 pointwise (1x1) convolutions over a few positions (efficientnet's over 2x2 at 64x64):
// y[p][o] = bias[o] + sum_i x[p][i] * w[o][i] for p < positions, o < out. Such a product reads
// each weight once for at most four multiply-adds, so its time is the weights' streaming from
// memory. The weights are packed in blocks of 16 outputs ([ceil(out / 16)][in][16], oneDNN's
// Acdb16a, zero-padded), and four blocks stream side by side, each the positions' 16 outputs in
// AVX-512 registers: from memory 1.2-1.4x oneDNN's brgconv_1x1 on efficientnet's shapes
// (docs/PERFORMANCE.md), where oneDNN read them as one stream. Blocks are split over the intra-op
// threads, each output computed by one thread in one order, so the bits do not depend on the
// thread count.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

// At most this many positions (a 2x2 image): the products of more read each weight for more
// multiply-adds than the streams leave time for (4x4: 0.96-1.2x oneDNN's).
inline constexpr int64_t kFewPositions = 4;

// Whether few_position_product runs here: a CPU with AVX-512 F (cpu_has_avx512f).
bool few_position_product_available();

// y[p * y_position + o * y_output] for p < positions <= kFewPositions, o < out, from x rows of
// `in` floats `x_position` apart and `packed` weights (above); bias may be null.
void few_position_product(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                          int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output);

namespace avx512 {
// Blocks [first, first + count) of 16 outputs of few_position_product, built with AVX-512
// (few_position_product_avx512.cc).
void few_position_blocks(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                         int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output,
                         int64_t first, int64_t count);
}  // namespace avx512

}  // namespace nrt::exec::cpu
