// small_product.h's tiles with AVX-512 F: kRows rows by kBlocks blocks of 16 columns, each
// accumulator summing over depth in order; the loops over a tile's rows and blocks unrolled whole,
// so that the accumulators stay in registers (pointwise_product_avx512.cc found GCC leaving them
// in memory otherwise).
#include <immintrin.h>

#include <algorithm>

#include "executor/kernels/cpu/small_product.h"

namespace nrt::exec::cpu::avx512 {
namespace {

template <int kRows, int kBlocks>
void tile(int64_t depth, float alpha, const float* a, int64_t a_row, int64_t a_col, const float* b, int64_t b_row,
          int64_t b_block, const float* bias, __mmask16 last, float* c, int64_t c_row) {
  __m512 acc[kRows][kBlocks];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 16
    for (int k = 0; k < kBlocks; ++k) acc[r][k] = _mm512_setzero_ps();
  }
  for (int64_t t = 0; t < depth; ++t) {
    __m512 w[kBlocks];
#pragma GCC unroll 16
    for (int k = 0; k < kBlocks; ++k) {
      w[k] = _mm512_maskz_loadu_ps(k + 1 == kBlocks ? last : __mmask16(0xffff), b + k * b_block + t * b_row);
    }
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) {
      const __m512 x = _mm512_set1_ps(a[r * a_row + t * a_col]);
#pragma GCC unroll 16
      for (int k = 0; k < kBlocks; ++k) acc[r][k] = _mm512_fmadd_ps(x, w[k], acc[r][k]);
    }
  }
  const __m512 scale = _mm512_set1_ps(alpha);
  __m512 offset[kBlocks];
#pragma GCC unroll 16
  for (int k = 0; k < kBlocks; ++k) {
    offset[k] = bias != nullptr ? _mm512_maskz_loadu_ps(k + 1 == kBlocks ? last : __mmask16(0xffff), bias + 16 * k)
                                : _mm512_setzero_ps();
  }
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 16
    for (int k = 0; k < kBlocks; ++k) {
      const __m512 scaled = _mm512_mul_ps(acc[r][k], scale);
      _mm512_mask_storeu_ps(c + r * c_row + 16 * k, k + 1 == kBlocks ? last : __mmask16(0xffff),
                            bias != nullptr ? _mm512_add_ps(scaled, offset[k]) : scaled);
    }
  }
}

// Rows [0, m) of one band of up to 64 columns, kBlocks blocks wide: tiles of 4 rows, then the rows
// left one by one.
template <int kBlocks>
void band(int64_t m, int64_t depth, float alpha, const float* a, int64_t a_row, int64_t a_col, const float* b,
          int64_t b_row, int64_t b_block, const float* bias, __mmask16 last, float* c, int64_t c_row) {
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    tile<4, kBlocks>(depth, alpha, a + i * a_row, a_row, a_col, b, b_row, b_block, bias, last, c + i * c_row, c_row);
  }
  for (; i < m; ++i) {
    tile<1, kBlocks>(depth, alpha, a + i * a_row, a_row, a_col, b, b_row, b_block, bias, last, c + i * c_row, c_row);
  }
}

}  // namespace

void small_product(int64_t m, int64_t n, int64_t depth, float alpha, const float* a, int64_t a_row, int64_t a_col,
                   const float* b, int64_t b_row, int64_t b_block, const float* bias, float* c, int64_t c_row) {
  if (depth == 0) {  // no products: a and b may be null (empty tensors), and are not offset
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const float scaled = 0.0f * alpha;  // as a tile's empty sum, scaled
        c[i * c_row + j] = bias != nullptr ? scaled + bias[j] : scaled;
      }
    }
    return;
  }
  for (int64_t j = 0; j < n; j += 64) {
    const int64_t width = std::min<int64_t>(64, n - j);
    const int blocks = static_cast<int>((width + 15) / 16);
    const int64_t tail = width - 16 * (blocks - 1);
    const auto last = static_cast<__mmask16>((1u << tail) - 1);
    const float* columns = b + (j / 16) * b_block;
    const float* offsets = bias != nullptr ? bias + j : nullptr;
    switch (blocks) {
      case 1: band<1>(m, depth, alpha, a, a_row, a_col, columns, b_row, b_block, offsets, last, c + j, c_row); break;
      case 2: band<2>(m, depth, alpha, a, a_row, a_col, columns, b_row, b_block, offsets, last, c + j, c_row); break;
      case 3: band<3>(m, depth, alpha, a, a_row, a_col, columns, b_row, b_block, offsets, last, c + j, c_row); break;
      default: band<4>(m, depth, alpha, a, a_row, a_col, columns, b_row, b_block, offsets, last, c + j, c_row); break;
    }
  }
}

}  // namespace nrt::exec::cpu::avx512
