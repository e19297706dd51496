// winograd_parts.h's products with AVX-512 F. Channels-last: a panel of 16 output channels is one
// 512-bit vector, so 6 tiles by 2 panels hold 12 accumulators, as the AVX2 kernel's 6 by 16. NCHW:
// 16 tiles are one vector, so 2 blocks of 6 output channels by 16 tiles. On cores with two 512-bit
// FMA units this is twice the AVX2 kernel's rate (a core of this machine: 225 GFLOP/s of
// independent 512-bit FMAs, 120 of 256-bit ones); on Zen 4 (256-bit units) the same. Each output
// still sums its channels in order from zero with one FMA each, so the bits are the AVX2 kernel's.
#include <immintrin.h>

#include "executor/kernels/cpu/winograd_parts.h"

namespace nrt::exec::cpu::winograd {
namespace {

// m_p[r][0..16) = sum over c of a_p[r * a_row + c * a_step] * b_p[c * ldb + 0..16) for r < 6 and
// the kPanels p: a_p = a + p * a_panel, b_p = b + p * b_panel, m_p = m + p * m_panel; m's rows `ldm`
// floats apart. Channels-last: six rows of V (a_row the channel count, a_step 1) times one or two
// panels of U; NCHW: one or two packed [channels][6] blocks of U (a_row 1, a_step 6) times a panel
// of 16 tiles of V.
template <int kPanels>
void multiply_tiles(int64_t channels, const float* a, int64_t a_row, int64_t a_step, int64_t a_panel, const float* b,
                    int64_t ldb, int64_t b_panel, float* m, int64_t ldm, int64_t m_panel) {
  static_assert(kPanels == 1 || kPanels == 2);
  // Named accumulators: GCC keeps them in registers (in an array it spilled the AVX2 kernel's).
  __m512 c00 = _mm512_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m512 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float* a_second = a + a_panel;
  const float* b_second = b + b_panel;
  for (int64_t c = 0; c < channels; ++c) {
    const __m512 b0 = _mm512_loadu_ps(b + c * ldb);
    const __m512 b1 = kPanels == 2 ? _mm512_loadu_ps(b_second + c * ldb) : b0;
    const int64_t at = c * a_step;
    const auto row = [&](int64_t r, __m512& first, __m512& second) {
      first = _mm512_fmadd_ps(_mm512_set1_ps(a[r * a_row + at]), b0, first);
      if constexpr (kPanels == 2) second = _mm512_fmadd_ps(_mm512_set1_ps(a_second[r * a_row + at]), b1, second);
    };
    row(0, c00, c01);
    row(1, c10, c11);
    row(2, c20, c21);
    row(3, c30, c31);
    row(4, c40, c41);
    row(5, c50, c51);
  }
  const __m512 rows[kChannelBlock][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  for (int r = 0; r < kChannelBlock; ++r) {
    _mm512_storeu_ps(m + r * ldm, rows[r][0]);
    if constexpr (kPanels == 2) _mm512_storeu_ps(m + m_panel + r * ldm, rows[r][1]);
  }
}

}  // namespace

void multiply_channels_last_avx512(const Geometry& g, const float* u, const float* v, int64_t padded, int64_t begin,
                                   int64_t end, float* m) {
  const int64_t panels = k_panels(g), pairs = k_panel_pairs(g), ldm = panels * kTileLanes;
  const int64_t panel_floats = g.channels * kTileLanes;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t xi = item / pairs, panel = 2 * (item % pairs);
    const float* b = u + (xi * panels + panel) * panel_floats;
    const float* a = v + xi * channels_last_v_xi_stride(g, padded);
    float* product = m + xi * channels_last_m_xi_stride(g, padded) + panel * kTileLanes;
    const bool two = panel + 1 < panels;
    for (int64_t tile = 0; tile < padded; tile += kChannelBlock) {
      const float* rows = a + tile * g.channels;
      float* out = product + tile * ldm;
      if (two) {
        multiply_tiles<2>(g.channels, rows, g.channels, 1, 0, b, kTileLanes, panel_floats, out, ldm, kTileLanes);
      } else {
        multiply_tiles<1>(g.channels, rows, g.channels, 1, 0, b, kTileLanes, panel_floats, out, ldm, kTileLanes);
      }
    }
  }
}

void multiply_avx512(const Geometry& g, const float* u, const float* v, int64_t stride, int64_t begin, int64_t end,
                     float* m) {
  const int64_t panels = stride / kTileLanes, block_floats = g.channels * kChannelBlock;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t xi = item / panels, panel = item % panels;
    const float* b = v + xi * v_xi_stride(g, stride) + panel * kTileLanes;
    float* product = m + xi * m_xi_stride(g, stride) + panel * kTileLanes;
    const int64_t m_block = kChannelBlock * stride;
    int64_t block = 0;
    for (; block + 1 < g.k_blocks; block += 2) {
      const float* a = u + (xi * g.k_blocks + block) * block_floats;
      multiply_tiles<2>(g.channels, a, 1, kChannelBlock, block_floats, b, stride, 0, product + block * m_block, stride,
                        m_block);
    }
    if (block < g.k_blocks) {
      const float* a = u + (xi * g.k_blocks + block) * block_floats;
      multiply_tiles<1>(g.channels, a, 1, kChannelBlock, 0, b, stride, 0, product + block * m_block, stride, 0);
    }
  }
}

}  // namespace nrt::exec::cpu::winograd
