// few_position_product.h's blocks with AVX-512 F.
#include <immintrin.h>

#include <algorithm>

#include "executor/kernels/cpu/few_position_product.h"

namespace nrt::exec::cpu::avx512 {
namespace {

// kBlocks blocks of 16 outputs (each its own stream of packed weights) for kPositions positions:
// kBlocks * kPositions accumulators. Every output's sum runs over the inputs in order, whatever
// kBlocks and kPositions are, so its bits do not depend on which tile computed it.
template <int kBlocks, int kPositions>
void tile(int64_t in, int64_t out, const float* packed, const float* x, int64_t x_position, const float* bias,
          float* y, int64_t y_position, int64_t y_output, int64_t first) {
  __m512 acc[kBlocks][kPositions];
#pragma GCC unroll 4
  for (int b = 0; b < kBlocks; ++b) {
    const int64_t o = (first + b) * 16;
    const __mmask16 valid = static_cast<__mmask16>(out - o >= 16 ? 0xffff : (1u << (out - o)) - 1);
    const __m512 start = bias == nullptr ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(valid, bias + o);
#pragma GCC unroll 4
    for (int p = 0; p < kPositions; ++p) acc[b][p] = start;
  }
  const float* block = packed + first * in * 16;
  for (int64_t i = 0; i < in; ++i) {
    __m512 w[kBlocks];
#pragma GCC unroll 4
    for (int b = 0; b < kBlocks; ++b) w[b] = _mm512_loadu_ps(block + (b * in + i) * 16);
#pragma GCC unroll 4
    for (int p = 0; p < kPositions; ++p) {
      const __m512 v = _mm512_set1_ps(x[p * x_position + i]);
#pragma GCC unroll 4
      for (int b = 0; b < kBlocks; ++b) acc[b][p] = _mm512_fmadd_ps(w[b], v, acc[b][p]);
    }
  }
#pragma GCC unroll 4
  for (int b = 0; b < kBlocks; ++b) {
    const int64_t o = (first + b) * 16, count = std::min<int64_t>(16, out - o);
    const __mmask16 valid = static_cast<__mmask16>(count == 16 ? 0xffff : (1u << count) - 1);
#pragma GCC unroll 4
    for (int p = 0; p < kPositions; ++p) {
      float* row = y + p * y_position + o * y_output;
      if (y_output == 1) {
        _mm512_mask_storeu_ps(row, valid, acc[b][p]);
      } else {
        alignas(64) float lanes[16];
        _mm512_store_ps(lanes, acc[b][p]);
        for (int64_t k = 0; k < count; ++k) row[k * y_output] = lanes[k];
      }
    }
  }
}

template <int kBlocks>
void positions_of(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x, int64_t x_position,
                  const float* bias, float* y, int64_t y_position, int64_t y_output, int64_t first) {
  switch (positions) {
    case 4: return tile<kBlocks, 4>(in, out, packed, x, x_position, bias, y, y_position, y_output, first);
    case 3: return tile<kBlocks, 3>(in, out, packed, x, x_position, bias, y, y_position, y_output, first);
    case 2: return tile<kBlocks, 2>(in, out, packed, x, x_position, bias, y, y_position, y_output, first);
    default: return tile<kBlocks, 1>(in, out, packed, x, x_position, bias, y, y_position, y_output, first);
  }
}

}  // namespace

void few_position_blocks(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                         int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output,
                         int64_t first, int64_t count) {
  // Four streams side by side read memory 1.2-1.4x as fast as two (docs/PERFORMANCE.md).
  int64_t b = first;
  for (; b + 4 <= first + count; b += 4) positions_of<4>(positions, in, out, packed, x, x_position, bias, y, y_position, y_output, b);
  for (; b < first + count; ++b) positions_of<1>(positions, in, out, packed, x, x_position, bias, y, y_position, y_output, b);
}

}  // namespace nrt::exec::cpu::avx512
