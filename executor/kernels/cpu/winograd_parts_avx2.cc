// winograd_parts.h's passes, built with -mavx2 -mfma: the transforms on 8-float vectors, the
// products in a 6x16 register-blocked kernel, for NCHW and for channels-last tensors.
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "executor/kernels/cpu/winograd_parts.h"

namespace nrt::exec::cpu::winograd {
namespace {

// Stores the first `count` lanes (all from 8): a row's last partial vector must not reach the next
// row (another item's, maybe another thread's). As 4, 2 and 1 lanes: AVX2's masked store took a
// third of the input pass (resnet18's 64 channels at 56x56), a copy through the stack more.
void store(float* to, __m256 value, int64_t count) {
  if (count >= 8) {
    _mm256_storeu_ps(to, value);
    return;
  }
  __m128 part = _mm256_castps256_ps128(value);
  if (count & 4) {
    _mm_storeu_ps(to, part);
    part = _mm256_extractf128_ps(value, 1);
    to += 4;
  }
  if (count & 2) {
    _mm_storel_pi(reinterpret_cast<__m64*>(to), part);
    part = _mm_movehl_ps(part, part);
    to += 2;
  }
  if (count & 1) _mm_store_ss(to, part);
}

// The epilogue on 8 outputs: the bias, then the activation. max and min return their second
// operand where either is NaN, so NaN stays NaN (and -0 stays -0), as in the scalar relu and clip
// of convolution_kernels.cc.
__m256 finish(const Epilogue& epilogue, __m256 value, __m256 bias) {
  value = _mm256_add_ps(value, bias);
  if (epilogue.kind == 1) return _mm256_max_ps(_mm256_setzero_ps(), value);
  if (epilogue.kind == 2) {
    return _mm256_min_ps(_mm256_set1_ps(epilogue.high), _mm256_max_ps(_mm256_set1_ps(epilogue.low), value));
  }
  return value;
}

// Columns [8 * block, 8 * block + 8) of an input row padded by pad_left zeros on the left, and
// zeros past its width: a masked load at the edges, which reads no byte outside the row.
__m256 padded_columns(const float* row, int64_t width, int64_t pad_left, int64_t block) {
  const int64_t x = 8 * block - pad_left;
  if (x >= 0 && x + 8 <= width) return _mm256_loadu_ps(row + x);
  if (x + 8 <= 0 || x >= width) return _mm256_setzero_ps();
  const __m256i column = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(x)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  const __m256i inside = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), column),
                                             _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(width)), column));
  return _mm256_maskload_ps(row + x, inside);
}

// even[m] = padded[2m], odd[m] = padded[2m + 1] for m < 8 * vectors, of padded_columns. Loaded
// straight from the row: a copy into a padded buffer first cost more than the transform, its
// stores not forwarding to the wider loads after them.
void deinterleave(const float* row, int64_t width, int64_t pad_left, int64_t vectors, float* even, float* odd) {
  for (int64_t i = 0; i < vectors; ++i) {
    const __m256 a = padded_columns(row, width, pad_left, 2 * i), b = padded_columns(row, width, pad_left, 2 * i + 1);
    // Within each 128-bit half: a0 a2 b0 b2 | a4 a6 b4 b6; then the 64-bit pairs in order.
    const __m256 e = _mm256_shuffle_ps(a, b, 0x88), o = _mm256_shuffle_ps(a, b, 0xDD);
    _mm256_storeu_ps(even + 8 * i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e), 0xD8)));
    _mm256_storeu_ps(odd + 8 * i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(o), 0xD8)));
  }
}

// B^T x over kTile + 2 vectors `step` apart, into y `y_step` apart. F(2x2, 3x3): B^T = [[1, 0, -1,
// 0], [0, 1, 1, 0], [0, -1, 1, 0], [0, 1, 0, -1]]. F(4x4, 3x3): B^T = [[4, 0, -5, 0, 1, 0],
// [0, -4, -4, 1, 1, 0], [0, 4, -4, -1, 1, 0], [0, -2, -1, 2, 1, 0], [0, 2, -1, -2, 1, 0],
// [0, 4, 0, -5, 0, 1]].
template <int kTile>
void input_points(const __m256* x, int step, __m256* y, int y_step) {
  if constexpr (kTile == 2) {
    y[0] = _mm256_sub_ps(x[0], x[2 * step]);
    y[y_step] = _mm256_add_ps(x[step], x[2 * step]);
    y[2 * y_step] = _mm256_sub_ps(x[2 * step], x[step]);
    y[3 * y_step] = _mm256_sub_ps(x[step], x[3 * step]);
  } else {
    const __m256 four = _mm256_set1_ps(4.0f), minus_four = _mm256_set1_ps(-4.0f), minus_five = _mm256_set1_ps(-5.0f);
    const __m256 two = _mm256_set1_ps(2.0f);
    const __m256 x0 = x[0], x1 = x[step], x2 = x[2 * step], x3 = x[3 * step], x4 = x[4 * step], x5 = x[5 * step];
    y[0] = _mm256_fmadd_ps(four, x0, _mm256_fmadd_ps(minus_five, x2, x4));
    y[y_step] = _mm256_fmadd_ps(minus_four, _mm256_add_ps(x1, x2), _mm256_add_ps(x3, x4));
    y[2 * y_step] = _mm256_fmadd_ps(four, _mm256_sub_ps(x1, x2), _mm256_sub_ps(x4, x3));
    y[3 * y_step] = _mm256_fmadd_ps(two, _mm256_sub_ps(x3, x1), _mm256_sub_ps(x4, x2));
    y[4 * y_step] = _mm256_fmadd_ps(two, _mm256_sub_ps(x1, x3), _mm256_sub_ps(x4, x2));
    y[5 * y_step] = _mm256_fmadd_ps(four, x1, _mm256_fmadd_ps(minus_five, x3, x5));
  }
}

// A^T x over kTile + 2 vectors into kTile. F(2x2, 3x3): A^T = [[1, 1, 1, 0], [0, 1, -1, -1]] (the
// NCHW and channels-last passes share it, and so their order of additions). F(4x4, 3x3): A^T = [[1, 1, 1, 1, 1, 0], [0, 1, -1, 2, -2, 0],
// [0, 1, 1, 4, 4, 0], [0, 1, -1, 8, -8, 1]].
template <int kTile>
void output_points(const __m256* x, int step, __m256* y, int y_step) {
  if constexpr (kTile == 2) {
    y[0] = _mm256_add_ps(_mm256_add_ps(x[0], x[step]), x[2 * step]);
    y[y_step] = _mm256_sub_ps(_mm256_sub_ps(x[step], x[2 * step]), x[3 * step]);
  } else {
    const __m256 a = _mm256_add_ps(x[step], x[2 * step]), b = _mm256_sub_ps(x[step], x[2 * step]);
    const __m256 c = _mm256_add_ps(x[3 * step], x[4 * step]), d = _mm256_sub_ps(x[3 * step], x[4 * step]);
    y[0] = _mm256_add_ps(_mm256_add_ps(x[0], a), c);
    y[y_step] = _mm256_fmadd_ps(_mm256_set1_ps(2.0f), d, b);
    y[2 * y_step] = _mm256_fmadd_ps(_mm256_set1_ps(4.0f), c, a);
    y[3 * y_step] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8.0f), d, b), x[5 * step]);
  }
}

// Elements [1, 9) of here:next. The rows were just stored a vector at a time; a load across two of
// those stores waits for both to complete (no store forwarding), so the shifted vector is built
// from the two whole ones.
__m256 shifted_by_one(__m256 here, __m256 next) {
  const __m256 middle = _mm256_permute2f128_ps(here, next, 0x21);  // here's upper half, next's lower
  return _mm256_castsi256_ps(_mm256_alignr_epi8(_mm256_castps_si256(middle), _mm256_castps_si256(here), 4));
}

}  // namespace

void transform_inputs(const Geometry& g, const float* input, int64_t first_row, int64_t rows, int64_t stride,
                      int64_t begin, int64_t end, float* v) {
  const int64_t tw = g.tiles_w, plane = g.in_h * g.in_w, xi_stride = v_xi_stride(g, stride);
  // Tile tx reads padded columns 2tx .. 2tx + 3: even[tx], odd[tx], even[tx + 1], odd[tx + 1],
  // for tx < tw in vectors of 8; the + 1 comes from the vector after, which ends before tw + 15.
  const int64_t vectors = (tw + 15) / 8, half = 8 * vectors;
  std::vector<float> scratch(static_cast<size_t>(8 * half));
  float* even[4];
  float* odd[4];
  for (int j = 0; j < 4; ++j) {
    even[j] = scratch.data() + 2 * j * half;
    odd[j] = even[j] + half;
  }
  for (int64_t item = begin; item < end; ++item) {
    const int64_t c = item / rows, row = first_row + item % rows;
    const int64_t n = row / g.tiles_h, ty = row % g.tiles_h;
    const float* image = input + (n * g.channels + c) * plane;
    for (int j = 0; j < 4; ++j) {
      const int64_t y = 2 * ty - g.pad_top + j;
      if (y < 0 || y >= g.in_h) {
        std::fill(even[j], even[j] + 2 * half, 0.0f);  // even and odd
      } else {
        deinterleave(image + y * g.in_w, g.in_w, g.pad_left, vectors, even[j], odd[j]);
      }
    }
    float* out = v + c * stride + (row - first_row) * tw;
    // B^T d B over the tile's rows, then its columns, for 8 tiles at a time.
    auto rows_of = [&](float* const* lines, int64_t at, __m256* r) {
      const __m256 d[4] = {_mm256_loadu_ps(lines[0] + at), _mm256_loadu_ps(lines[1] + at),
                           _mm256_loadu_ps(lines[2] + at), _mm256_loadu_ps(lines[3] + at)};
      input_points<2>(d, 1, r, 1);
    };
    for (int64_t tx = 0; tx < tw; tx += 8) {
      __m256 e0[4], o0[4], e8[4], o8[4];
      rows_of(even, tx, e0);
      rows_of(odd, tx, o0);
      rows_of(even, tx + 8, e8);
      rows_of(odd, tx + 8, o8);
      const int64_t count = tw - tx;
      for (int i = 0; i < 4; ++i) {
        // Columns 2tx .. 2tx + 3 of each tile: even[tx], odd[tx], even[tx + 1], odd[tx + 1].
        const __m256 columns[4] = {e0[i], o0[i], shifted_by_one(e0[i], e8[i]), shifted_by_one(o0[i], o8[i])};
        __m256 points[4];
        input_points<2>(columns, 1, points, 1);
        for (int j = 0; j < 4; ++j) store(out + (4 * i + j) * xi_stride + tx, points[j], count);
      }
    }
  }
}

namespace {

// m[r][0..16) = sum over c of a[r * a_row + c * a_step] * b[c * ldb + 0..16) for r < 6, m's rows
// `ldm` floats apart: the NCHW products take a packed [channels][6] (a_row 1, a_step 6), the
// channels-last ones six rows of V (a_row the channel count, a_step 1).
void multiply_block(int64_t channels, const float* a, int64_t a_row, int64_t a_step, const float* b, int64_t ldb,
                    float* m, int64_t ldm) {
  // Twelve named accumulators: held in an array, GCC stored them to the stack on every step.
  __m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00, c20 = c00, c21 = c00;
  __m256 c30 = c00, c31 = c00, c40 = c00, c41 = c00, c50 = c00, c51 = c00;
  const float *a0 = a, *a1 = a + a_row, *a2 = a1 + a_row, *a3 = a2 + a_row, *a4 = a3 + a_row, *a5 = a4 + a_row;
  for (int64_t c = 0; c < channels; ++c) {
    const __m256 b0 = _mm256_loadu_ps(b + c * ldb), b1 = _mm256_loadu_ps(b + c * ldb + 8);
    const int64_t at = c * a_step;
    const auto row = [&](const float* a_row, __m256& low, __m256& high) {
      const __m256 ar = _mm256_broadcast_ss(a_row + at);
      low = _mm256_fmadd_ps(ar, b0, low);
      high = _mm256_fmadd_ps(ar, b1, high);
    };
    row(a0, c00, c01);
    row(a1, c10, c11);
    row(a2, c20, c21);
    row(a3, c30, c31);
    row(a4, c40, c41);
    row(a5, c50, c51);
  }
  const __m256 rows[kChannelBlock][2] = {{c00, c01}, {c10, c11}, {c20, c21}, {c30, c31}, {c40, c41}, {c50, c51}};
  for (int r = 0; r < kChannelBlock; ++r) {
    _mm256_storeu_ps(m + r * ldm, rows[r][0]);
    _mm256_storeu_ps(m + r * ldm + 8, rows[r][1]);
  }
}

}  // namespace

void multiply(const Geometry& g, const float* u, const float* v, int64_t stride, int64_t begin, int64_t end,
              float* m) {
  const int64_t panels = stride / kTileLanes;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t xi = item / panels, panel = item % panels;
    const float* b = v + xi * v_xi_stride(g, stride) + panel * kTileLanes;
    float* product = m + xi * m_xi_stride(g, stride) + panel * kTileLanes;
    for (int64_t block = 0; block < g.k_blocks; ++block) {
      const float* a = u + (xi * g.k_blocks + block) * g.channels * kChannelBlock;
      multiply_block(g.channels, a, 1, kChannelBlock, b, stride, product + block * kChannelBlock * stride, stride);
    }
  }
}

void transform_outputs(const Geometry& g, const float* m, int64_t first_row, int64_t rows, int64_t stride,
                       int64_t begin, int64_t end, const Epilogue& epilogue, float* output) {
  const int64_t tw = g.tiles_w, xi_stride = m_xi_stride(g, stride);
  const int64_t plane = g.out_h * g.out_w;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t k = item / rows, row = first_row + item % rows;
    const int64_t n = row / g.tiles_h, ty = row % g.tiles_h;
    const float* in = m + k * stride + (row - first_row) * tw;
    const __m256 bias = _mm256_set1_ps(epilogue.bias != nullptr ? epilogue.bias[k] : 0.0f);
    float* image = output + (n * g.out_channels + k) * plane + 2 * ty * g.out_w;
    const bool second_row = 2 * ty + 1 < g.out_h;
    for (int64_t tx = 0; tx < tw; tx += 8) {
      // A^T M A over the rows of each tile, then its columns, for 8 tiles at a time.
      __m256 p[4][4], s[2][4];
      for (int xi = 0; xi < 16; ++xi) p[xi / 4][xi % 4] = _mm256_loadu_ps(in + xi * xi_stride + tx);
      for (int j = 0; j < 4; ++j) output_points<2>(&p[0][j], 4, &s[0][j], 4);
      const int64_t columns = g.out_w - 2 * tx;  // of this row from 2tx on
      for (int r = 0; r < (second_row ? 2 : 1); ++r) {
        __m256 pair[2];
        output_points<2>(s[r], 1, pair, 1);
        const __m256 left = finish(epilogue, pair[0], bias), right = finish(epilogue, pair[1], bias);
        // Tile t's two columns side by side: l0 r0 l1 r1 ... l7 r7.
        const __m256 lo = _mm256_unpacklo_ps(left, right), hi = _mm256_unpackhi_ps(left, right);
        float* to = image + r * g.out_w + 2 * tx;
        store(to, _mm256_permute2f128_ps(lo, hi, 0x20), columns);
        if (columns > 8) store(to + 8, _mm256_permute2f128_ps(lo, hi, 0x31), columns - 8);
      }
    }
  }
}

// Channels-last: every vector holds 8 neighbouring channels of one position, so the transforms
// need no shuffles and the products' rows are the tiles. One pass per side for both tile sizes:
// the transforms over the tile's rows, then its columns.
namespace {

template <int kTile>
void inputs_channels_last(const Geometry& g, const float* input, int64_t first_row, int64_t padded, int64_t begin,
                          int64_t end, float* v) {
  constexpr int kSide = kTile + 2;
  const int64_t channels = g.channels, blocks = channels / 8, tw = g.tiles_w;
  const int64_t xi_stride = channels_last_v_xi_stride(g, padded);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t row = first_row + item / blocks, c = 8 * (item % blocks);
    const int64_t n = row / g.tiles_h, ty = row % g.tiles_h;
    const float* image = input + n * g.in_h * g.in_w * channels + c;
    float* out = v + (row - first_row) * tw * channels + c;
    for (int64_t tx = 0; tx < tw; ++tx) {
      __m256 d[kSide][kSide], r[kSide][kSide], t[kSide][kSide];
      for (int i = 0; i < kSide; ++i) {
        const int64_t y = kTile * ty - g.pad_top + i;
        for (int j = 0; j < kSide; ++j) {
          const int64_t x = kTile * tx - g.pad_left + j;
          const bool inside = y >= 0 && y < g.in_h && x >= 0 && x < g.in_w;
          d[i][j] = inside ? _mm256_loadu_ps(image + (y * g.in_w + x) * channels) : _mm256_setzero_ps();
        }
      }
      for (int j = 0; j < kSide; ++j) input_points<kTile>(&d[0][j], kSide, &r[0][j], kSide);
      for (int i = 0; i < kSide; ++i) input_points<kTile>(&r[i][0], 1, &t[i][0], 1);
      float* to = out + tx * channels;
      for (int xi = 0; xi < kSide * kSide; ++xi) _mm256_storeu_ps(to + xi * xi_stride, t[xi / kSide][xi % kSide]);
    }
  }
}

template <int kTile>
void outputs_channels_last(const Geometry& g, const float* m, int64_t first_row, int64_t padded, int64_t begin,
                           int64_t end, const Epilogue& epilogue, float* output) {
  constexpr int kSide = kTile + 2;
  const int64_t out_channels = g.out_channels, blocks = out_channels / 8, tw = g.tiles_w;
  const int64_t ldm = k_panels(g) * kTileLanes, xi_stride = channels_last_m_xi_stride(g, padded);
  for (int64_t item = begin; item < end; ++item) {
    const int64_t row = first_row + item / blocks, k = 8 * (item % blocks);
    const int64_t n = row / g.tiles_h, ty = row % g.tiles_h;
    const float* in = m + (row - first_row) * tw * ldm + k;
    const __m256 bias = epilogue.bias != nullptr ? _mm256_loadu_ps(epilogue.bias + k) : _mm256_setzero_ps();
    float* image = output + n * g.out_h * g.out_w * out_channels + k;
    for (int64_t tx = 0; tx < tw; ++tx) {
      __m256 p[kSide][kSide], r[kTile][kSide], y[kTile][kTile];
      for (int xi = 0; xi < kSide * kSide; ++xi) p[xi / kSide][xi % kSide] = _mm256_loadu_ps(in + tx * ldm + xi * xi_stride);
      for (int j = 0; j < kSide; ++j) output_points<kTile>(&p[0][j], kSide, &r[0][j], kSide);
      for (int i = 0; i < kTile; ++i) output_points<kTile>(&r[i][0], 1, &y[i][0], 1);
      for (int i = 0; i < kTile && kTile * ty + i < g.out_h; ++i) {
        for (int j = 0; j < kTile && kTile * tx + j < g.out_w; ++j) {
          float* to = image + ((kTile * ty + i) * g.out_w + kTile * tx + j) * out_channels;
          _mm256_storeu_ps(to, finish(epilogue, y[i][j], bias));
        }
      }
    }
  }
}

}  // namespace

void transform_inputs_channels_last(const Geometry& g, int tile, const float* input, int64_t first_row,
                                    int64_t padded, int64_t begin, int64_t end, float* v) {
  if (tile == 4) {
    inputs_channels_last<4>(g, input, first_row, padded, begin, end, v);
  } else {
    inputs_channels_last<2>(g, input, first_row, padded, begin, end, v);
  }
}

void multiply_channels_last(const Geometry& g, const float* u, const float* v, int64_t padded, int64_t begin,
                            int64_t end, float* m) {
  const int64_t panels = k_panels(g), ldm = panels * kTileLanes;
  for (int64_t item = begin; item < end; ++item) {
    const int64_t xi = item / panels, panel = item % panels;
    const float* b = u + (xi * panels + panel) * g.channels * kTileLanes;
    const float* a = v + xi * channels_last_v_xi_stride(g, padded);
    float* product = m + xi * channels_last_m_xi_stride(g, padded) + panel * kTileLanes;
    for (int64_t tile = 0; tile < padded; tile += kChannelBlock) {
      multiply_block(g.channels, a + tile * g.channels, g.channels, 1, b, kTileLanes, product + tile * ldm, ldm);
    }
  }
}

void transform_outputs_channels_last(const Geometry& g, int tile, const float* m, int64_t first_row, int64_t padded,
                                     int64_t begin, int64_t end, const Epilogue& epilogue, float* output) {
  if (tile == 4) {
    outputs_channels_last<4>(g, m, first_row, padded, begin, end, epilogue, output);
  } else {
    outputs_channels_last<2>(g, m, first_row, padded, begin, end, epilogue, output);
  }
}

}  // namespace nrt::exec::cpu::winograd
