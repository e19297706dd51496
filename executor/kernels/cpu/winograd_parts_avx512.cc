// winograd_parts.h's products with AVX-512 F. Channels-last: a panel of 16 output channels is one
// 512-bit vector, and 6 tiles by 4 panels hold 24 accumulators (the AVX2 kernel: 6 by 16 outputs).
// NCHW: 16 tiles are one vector, and 4 blocks of 6 output channels by 16 tiles. On cores with two 512-bit
// FMA units this is twice the AVX2 kernel's rate (a core of this machine: 225 GFLOP/s of
// independent 512-bit FMAs, 120 of 256-bit ones); on Zen 4 (256-bit units) the same. Each output
// still sums its channels in order from zero with one FMA each, so the bits are the AVX2 kernel's.
#include <immintrin.h>

#include <algorithm>
#include <type_traits>

#include "executor/kernels/cpu/winograd_parts.h"

namespace nrt::exec::cpu::winograd {
namespace {

// m_p[r][0..16) = sum over c of a_p[r * a_row + c * a_step] * b_p[c * ldb + 0..16) for r < 6 and
// the kPanels p: a_p = a + p * a_panel, b_p = b + p * b_panel, m_p = m + p * m_panel; m's rows `ldm`
// floats apart. Channels-last: six rows of V (a_row the channel count, a_step 1) times 1, 2 or 4
// panels of U; NCHW: 1, 2 or 4 packed [channels][6] blocks of U (a_row 1, a_step 6) times a panel
// of 16 tiles of V. Four panels hold 24 accumulators: 6 by 4 ran 148-171 GFLOP/s on resnet18's
// shapes where 6 by 2 ran 128-158 (one core of this machine, a scratch harness, data in cache).
template <int kPanels>
void multiply_tiles(int64_t channels, const float* a, int64_t a_row, int64_t a_step, int64_t a_panel, const float* b,
                    int64_t ldb, int64_t b_panel, float* m, int64_t ldm, int64_t m_panel) {
  static_assert(kPanels == 1 || kPanels == 2 || kPanels == 4);
  __m512 sums[kChannelBlock][kPanels];
#pragma GCC unroll 6
  for (int r = 0; r < kChannelBlock; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) sums[r][p] = _mm512_setzero_ps();
  }
  for (int64_t c = 0; c < channels; ++c) {
    __m512 columns[kPanels];
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) columns[p] = _mm512_loadu_ps(b + p * b_panel + c * ldb);
    const float* at = a + c * a_step;
#pragma GCC unroll 6
    for (int r = 0; r < kChannelBlock; ++r) {
#pragma GCC unroll 4
      for (int p = 0; p < kPanels; ++p) {
        sums[r][p] = _mm512_fmadd_ps(_mm512_set1_ps(at[p * a_panel + r * a_row]), columns[p], sums[r][p]);
      }
    }
  }
#pragma GCC unroll 6
  for (int r = 0; r < kChannelBlock; ++r) {
#pragma GCC unroll 4
    for (int p = 0; p < kPanels; ++p) _mm512_storeu_ps(m + p * m_panel + r * ldm, sums[r][p]);
  }
}

// call(first, count) over blocks [0, count_all): four at a time, then two, then one.
template <class Call>
void by_fours(int64_t count_all, const Call& call) {
  int64_t block = 0;
  for (; block + 4 <= count_all; block += 4) call(block, std::integral_constant<int, 4>{});
  for (; block + 2 <= count_all; block += 2) call(block, std::integral_constant<int, 2>{});
  if (block < count_all) call(block, std::integral_constant<int, 1>{});
}

}  // namespace

void multiply_channels_last_avx512(const Geometry& g, const float* u, const float* v, int64_t padded, int64_t begin,
                                   int64_t end, float* m) {
  const int64_t panels = k_panels(g), groups = k_panel_groups(g), ldm = panels * kTileLanes;
  const int64_t panel_floats = g.channels * kTileLanes;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t xi = item / groups, first = kPanelGroup * (item % groups);
    const float* b = u + (xi * panels + first) * panel_floats;
    const float* a = v + xi * channels_last_v_xi_stride(g, padded);
    float* product = m + xi * channels_last_m_xi_stride(g, padded) + first * kTileLanes;
    for (int64_t tile = 0; tile < padded; tile += kChannelBlock) {
      by_fours(std::min(kPanelGroup, panels - first), [&](int64_t panel, auto count) {
        multiply_tiles<count()>(g.channels, a + tile * g.channels, g.channels, 1, 0, b + panel * panel_floats,
                                kTileLanes, panel_floats, product + tile * ldm + panel * kTileLanes, ldm, kTileLanes);
      });
    }
  }
}

void multiply_avx512(const Geometry& g, const float* u, const float* v, int64_t stride, int64_t begin, int64_t end,
                     float* m) {
  const int64_t panels = stride / kTileLanes, block_floats = g.channels * kChannelBlock;
  const int64_t m_block = kChannelBlock * stride;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t xi = item / panels, panel = item % panels;
    const float* b = v + xi * v_xi_stride(g, stride) + panel * kTileLanes;
    float* product = m + xi * m_xi_stride(g, stride) + panel * kTileLanes;
    by_fours(g.k_blocks, [&](int64_t block, auto count) {
      multiply_tiles<count()>(g.channels, u + (xi * g.k_blocks + block) * block_floats, 1, kChannelBlock, block_floats,
                              b, stride, 0, product + block * m_block, stride, m_block);
    });
  }
}

}  // namespace nrt::exec::cpu::winograd
