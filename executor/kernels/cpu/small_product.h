// Float32 matrix products too small for a library call to pay: c = alpha * a @ b (+ bias) with a
// [m, depth] at any strides and b [depth, n] in blocks of 16 contiguous columns (plain rows, or a
// linear's weights packed as pointwise_product.h's), on AVX-512 register tiles of up to 4 rows by
// 64 columns. oneDNN's sgemm takes 0.7-0.8 us a call on an attention head's products at 32 x 32 x
// 16, most of it the call (docs/PERFORMANCE.md). Each output sums its products in order of depth
// and is then scaled by alpha, whichever tile computes it: the bits depend neither on the tiling
// nor on the thread that runs it.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

// Products of at most this many multiply-adds run here (attention_kernels.cc, linear), larger ones on
// oneDNN: one thread, against dnnl_sgemm on the same operands, 1.6-1.9x at 2^14 (32 x 32 x 16,
// 32 x 16 x 32), 1.0-1.2x at 2^17 (64 x 64 x 32, 64 x 32 x 64), 0.75-0.85x at 2^18.
inline constexpr int64_t kSmallProductMultiplyAdds = int64_t{1} << 17;

// Whether small_product runs here: a CPU with AVX-512 F.
bool small_product_available();

namespace avx512 {
// c[i * c_row + j] = alpha * sum_t a[i * a_row + t * a_col] * B(t, j) (+ bias[j] where bias is not
// null) for i < m, j < n, t < depth, B(t, j) = b[(j / 16) * b_block + t * b_row + j % 16]: plain
// rows have b_block 16, packed weights [ceil(n / 16)][depth][16] b_row 16 and b_block 16 * depth
// (small_product_avx512.cc).
void small_product(int64_t m, int64_t n, int64_t depth, float alpha, const float* a, int64_t a_row, int64_t a_col,
                   const float* b, int64_t b_row, int64_t b_block, const float* bias, float* c, int64_t c_row);
}  // namespace avx512

}  // namespace nrt::exec::cpu
