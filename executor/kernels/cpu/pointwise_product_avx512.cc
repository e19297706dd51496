// pointwise_product.h's tiles with AVX-512 F. Every loop over a tile's rows and blocks is unrolled
// whole (`unroll 16`), so that its accumulators stay in registers: with `unroll 4`, GCC left a
// 6-row loop rolled and the 24 accumulators in memory, at 0.6-0.85x oneDNN's speed.
#include <immintrin.h>

#include <algorithm>

#include "executor/kernels/cpu/output_clamp_avx512.h"
#include "executor/kernels/cpu/pointwise_product.h"

namespace nrt::exec::cpu::avx512 {
namespace {

// kBlocks blocks of 16 outputs (each its own stream of packed weights) for kPositions positions:
// kBlocks * kPositions accumulators. Every output's sum runs over the inputs in order, whatever
// kBlocks and kPositions are, so its bits do not depend on which tile computed it.
template <int kBlocks, int kPositions>
void tile(int64_t in, int64_t out, const float* packed, const float* x, int64_t x_position, const float* bias,
          const Clamp& clamp, float* y, int64_t y_position, int64_t y_output, int64_t first) {
  __m512 acc[kBlocks][kPositions];
#pragma GCC unroll 16
  for (int b = 0; b < kBlocks; ++b) {
    const int64_t o = (first + b) * 16;
    const __mmask16 valid = static_cast<__mmask16>(out - o >= 16 ? 0xffff : (1u << (out - o)) - 1);
    const __m512 start = bias == nullptr ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(valid, bias + o);
#pragma GCC unroll 16
    for (int p = 0; p < kPositions; ++p) acc[b][p] = start;
  }
  const float* block = packed + first * in * 16;
  for (int64_t i = 0; i < in; ++i) {
    __m512 w[kBlocks];
#pragma GCC unroll 16
    for (int b = 0; b < kBlocks; ++b) w[b] = _mm512_loadu_ps(block + (b * in + i) * 16);
#pragma GCC unroll 16
    for (int p = 0; p < kPositions; ++p) {
      const __m512 v = _mm512_set1_ps(x[p * x_position + i]);
#pragma GCC unroll 16
      for (int b = 0; b < kBlocks; ++b) acc[b][p] = _mm512_fmadd_ps(w[b], v, acc[b][p]);
    }
  }
#pragma GCC unroll 16
  for (int b = 0; b < kBlocks; ++b) {
    const int64_t o = (first + b) * 16, count = std::min<int64_t>(16, out - o);
    const __mmask16 valid = static_cast<__mmask16>(count == 16 ? 0xffff : (1u << count) - 1);
#pragma GCC unroll 16
    for (int p = 0; p < kPositions; ++p) {
      acc[b][p] = clamp(acc[b][p]);
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
void positions_of(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                  int64_t x_position, const float* bias, const Clamp& clamp, float* y, int64_t y_position,
                  int64_t y_output, int64_t first) {
  switch (positions) {
    case 4: return tile<kBlocks, 4>(in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, first);
    case 3: return tile<kBlocks, 3>(in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, first);
    case 2: return tile<kBlocks, 2>(in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, first);
    default: return tile<kBlocks, 1>(in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, first);
  }
}

// Rows [begin, end) of kBlocks blocks from `first`: tiles of kPositions rows, the last one moved
// back to end at `end` (its rows computed twice, to the same bits); fewer rows than a tile in
// tiles of at most four.
template <int kBlocks, int kPositions>
void rows_of(int64_t begin, int64_t end, int64_t in, int64_t out, const float* packed, const float* x,
             int64_t x_position, const float* bias, const Clamp& clamp, float* y, int64_t y_position, int64_t first) {
  if (end - begin < kPositions) {
    for (int64_t p = begin; p < end; p += 4) {
      positions_of<kBlocks>(std::min<int64_t>(4, end - p), in, out, packed, x + p * x_position, x_position, bias,
                            clamp, y + p * y_position, y_position, 1, first);
    }
    return;
  }
  for (int64_t p = begin; p < end; p += kPositions) {
    const int64_t at = std::min(p, end - kPositions);
    tile<kBlocks, kPositions>(in, out, packed, x + at * x_position, x_position, bias, clamp, y + at * y_position,
                              y_position, 1, first);
  }
}

// Blocks [first, first + count) over rows [begin, end): four blocks at a time on 6 rows (24
// accumulators), the last one to three blocks on 8 or 12 rows.
void row_region(int64_t begin, int64_t end, int64_t in, int64_t out, const float* packed, const float* x,
                int64_t x_position, const float* bias, const Clamp& clamp, float* y, int64_t y_position,
                int64_t first, int64_t count) {
  int64_t b = first;
  for (; b + 4 <= first + count; b += 4) {
    rows_of<4, 6>(begin, end, in, out, packed, x, x_position, bias, clamp, y, y_position, b);
  }
  switch (first + count - b) {
    case 3: return rows_of<3, 8>(begin, end, in, out, packed, x, x_position, bias, clamp, y, y_position, b);
    case 2: return rows_of<2, 12>(begin, end, in, out, packed, x, x_position, bias, clamp, y, y_position, b);
    case 1: return rows_of<1, 12>(begin, end, in, out, packed, x, x_position, bias, clamp, y, y_position, b);
    default: return;
  }
}

}  // namespace

void pointwise_rows(int64_t begin, int64_t end, int64_t in, int64_t out, const float* packed, const float* x,
                    int64_t x_position, const float* bias, const OutputClamp& output_clamp, float* y,
                    int64_t y_position, int64_t first, int64_t count) {
  const Clamp clamp(output_clamp);
  // Rows in bands whose inputs stay in the L1 while every block passes over them; the blocks'
  // weights stay in the L2 from band to band.
  const int64_t band = std::max<int64_t>(
      kPointwiseRowUnit, (int64_t{16} << 10) / (4 * std::max<int64_t>(in, 1)) / kPointwiseRowUnit * kPointwiseRowUnit);
  for (int64_t p = begin; p < end; p += band) {
    row_region(p, std::min(end, p + band), in, out, packed, x, x_position, bias, clamp, y, y_position, first, count);
  }
}

void few_position_blocks(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                         int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output,
                         int64_t first, int64_t count) {
  const Clamp clamp{OutputClamp{}};
  // Four streams side by side read memory 1.2-1.4x as fast as two (docs/PERFORMANCE.md), and the
  // last one to three blocks side by side too (one at a time, efficientnet's 1152 -> 48
  // squeeze-excitation products took 17 us for 221 KB).
  int64_t b = first;
  for (; b + 4 <= first + count; b += 4) {
    positions_of<4>(positions, in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, b);
  }
  switch (first + count - b) {
    case 3: return positions_of<3>(positions, in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, b);
    case 2: return positions_of<2>(positions, in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, b);
    case 1: return positions_of<1>(positions, in, out, packed, x, x_position, bias, clamp, y, y_position, y_output, b);
    default: return;
  }
}

}  // namespace nrt::exec::cpu::avx512
