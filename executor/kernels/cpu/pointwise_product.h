// Float32 pointwise (1x1) convolutions on packed weights: y[p][o] = bias[o] + sum_i x[p][i] *
// w[o][i] for p < positions, o < out, the weights packed in blocks of 16 outputs
// ([ceil(out / 16)][in][16], oneDNN's Acdb16a, zero-padded). Two shapes of product:
// - Over a few positions (efficientnet's over 2x2 at 64x64), each weight read once for at most four
//   multiply-adds, so the time is the weights' streaming from memory: four blocks stream side by
//   side, each the positions' 16 outputs in AVX-512 registers; from memory 1.2-1.4x oneDNN's
//   brgconv_1x1 on efficientnet's shapes, where oneDNN read them as one stream.
// - Over any number of channels-last rows, on register tiles of 6 rows by 4 blocks (12 rows by 2,
//   8 by 3, 12 by 1 for the last blocks), relu and hardtanh applied in the registers: faster than
//   oneDNN on efficientnet_b0_64's small products in the model, where a oneDNN call starts cold in
//   a cache the weights' stream has swept, and on mobilenet_v2's (below).
// Each output sums its inputs in order from the bias, whichever tile or thread computes it, so the
// bits depend neither on the tiling nor on the intra-op thread count (docs/PERFORMANCE.md).
#pragma once

#include <cstdint>

#include "executor/kernels/cpu/output_clamp.h"

namespace nrt::exec::cpu {

// At most this many positions for the streamed product (a 2x2 image): the products of more read
// each weight for more multiply-adds than the streams leave time for (4x4: 0.96-1.2x oneDNN's).
inline constexpr int64_t kFewPositions = 4;

// Tiled products over more positions run here too, whatever their size: with their relu or
// hardtanh in the registers, where oneDNN's products on plain layouts left it to a pass of its
// own, mobilenet_v2's convolutions took 0.96 of their time on oneDNN at 1 thread and 0.92 at 2
// (the sum of its nodes' times in `nrt-run --profile`, docs/PERFORMANCE.md).

// Rows go to bands in multiples of this many, which each tile's rows (6, 8, 12) divide (and to
// threads in multiples of what the tiles of the product's blocks divide): a band of 18 rows ran a 12-row tile twice over 6 of them (mobilenet_v2's 192 -> 32 at
// 0.77x oneDNN's speed).
inline constexpr int64_t kPointwiseRowUnit = 24;

// Whether these products run here: a CPU with AVX-512 F (cpu_has_avx512f).
bool pointwise_product_available();

// y[p * y_position + o * y_output] for p < positions <= kFewPositions, o < out, from x rows of
// `in` floats `x_position` apart and `packed` weights (above); bias may be null.
void few_position_product(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                          int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output);

// y[p * y_position + o] for every p < positions (rows), clamped; x, packed and bias as above.
void pointwise_product(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                       int64_t x_position, const float* bias, const OutputClamp& clamp, float* y,
                       int64_t y_position);

namespace avx512 {
// Blocks [first, first + count) of 16 outputs of few_position_product, built with AVX-512
// (pointwise_product_avx512.cc).
void few_position_blocks(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                         int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output,
                         int64_t first, int64_t count);
// Rows [begin, end) of pointwise_product's y, the outputs of blocks [first, first + count).
void pointwise_rows(int64_t begin, int64_t end, int64_t in, int64_t out, const float* packed, const float* x,
                    int64_t x_position, const float* bias, const OutputClamp& clamp, float* y, int64_t y_position,
                    int64_t first, int64_t count);
}  // namespace avx512

}  // namespace nrt::exec::cpu
