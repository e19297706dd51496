// channels_last_depthwise.h's rows with AVX-512 F. A row runs in chunks of kChunk outputs, and
// within a chunk one 16-channel block after the other: the chunk's input lines (kChunk * stride +
// kernel positions of each kernel row) come from the L2 for the first block and from the L1 for
// the others, where a block's lines along a whole row (64 bytes a position, C * 4 bytes apart)
// waited on the L3 (0.6x oneDNN's speed on mobilenet_v2). Square 3x3 and 5x5 kernels at stride 1
// or 2 keep their taps in registers and several outputs' sums, each input vector loaded once for
// all the outputs that read it; other windows load their taps, and the edges (outputs whose
// window crosses the padding) skip the padding's taps.
#include <immintrin.h>

#include <algorithm>

#include "executor/kernels/cpu/channels_last_depthwise.h"
#include "executor/kernels/cpu/output_clamp_avx512.h"

namespace nrt::exec::cpu::avx512 {
namespace {

constexpr int64_t kChunk = 16;

__mmask16 lanes(int64_t count) {
  return static_cast<__mmask16>(count >= 16 ? 0xffff : count <= 0 ? 0 : (1u << count) - 1);
}

// kOutputs outputs from `ox` on, kBlocks blocks of 16 channels from `c` (`valid` their lanes),
// taps kx in [kx_lo, kx_hi) of each kernel row: all of them for the outputs whose taps lie inside
// the input row, fewer at its edges (one output there). Every output sums bias and taps in the same
// order, whichever variant computes it.
template <int kOutputs, int kBlocks>
void outputs(const DepthwiseWindow& w, const float* const* rows, const float* taps, const float* bias,
             const Clamp& clamp, float* y, int64_t ox, int64_t c, const __mmask16* valid, int64_t kx_lo,
             int64_t kx_hi) {
  const int64_t channels = w.channels, stride = w.stride[1];
  __m512 acc[kOutputs][kBlocks];
#pragma GCC unroll 4
  for (int b = 0; b < kBlocks; ++b) {
    const __m512 start = bias == nullptr ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(valid[b], bias + c + b * 16);
#pragma GCC unroll 8
    for (int o = 0; o < kOutputs; ++o) acc[o][b] = start;
  }
  for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
    const float* row = rows[ky];
    if (row == nullptr) continue;
    const float* tap = taps + ky * w.kernel[1] * channels + c;
    const float* line = row + (ox * stride - w.pad[1]) * channels + c;
    for (int64_t kx = kx_lo; kx < kx_hi; ++kx) {
#pragma GCC unroll 4
      for (int b = 0; b < kBlocks; ++b) {
        const __m512 t = _mm512_maskz_loadu_ps(valid[b], tap + kx * channels + b * 16);
#pragma GCC unroll 8
        for (int o = 0; o < kOutputs; ++o) {
          const __m512 v = _mm512_maskz_loadu_ps(valid[b], line + (o * stride + kx) * channels + b * 16);
          acc[o][b] = _mm512_fmadd_ps(v, t, acc[o][b]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < kOutputs; ++o) {
#pragma GCC unroll 4
    for (int b = 0; b < kBlocks; ++b) {
      _mm512_mask_storeu_ps(y + (ox + o) * channels + c + b * 16, valid[b], clamp(acc[o][b]));
    }
  }
}

// kOutputs outputs from `ox` on, all inside the input row, of the 16 channels from `c` (`valid`),
// for a kK x kK kernel at stride kStride, its taps `t` in registers: each input vector is loaded
// once for every output whose taps read it (a load per multiply-add held this CPU to a third of
// its multiply-add rate). An output's taps still come in order, kx ascending per ky.
template <int kK, int kStride, int kOutputs>
void tap_outputs(const DepthwiseWindow& w, const float* const* rows, const __m512* t, __m512 start,
                 const Clamp& clamp, float* y, int64_t ox, int64_t c, __mmask16 valid) {
  const int64_t channels = w.channels;
  __m512 acc[kOutputs];
#pragma GCC unroll 8
  for (int o = 0; o < kOutputs; ++o) acc[o] = start;
#pragma GCC unroll 8
  for (int ky = 0; ky < kK; ++ky) {
    const float* row = rows[ky];
    if (row == nullptr) continue;
    const float* line = row + (ox * kStride - w.pad[1]) * channels + c;
#pragma GCC unroll 32
    for (int i = 0; i < (kOutputs - 1) * kStride + kK; ++i) {
      const __m512 v = _mm512_maskz_loadu_ps(valid, line + i * channels);
#pragma GCC unroll 8
      for (int o = 0; o < kOutputs; ++o) {
        const int kx = i - o * kStride;
        if (kx >= 0 && kx < kK) acc[o] = _mm512_fmadd_ps(v, t[ky * kK + kx], acc[o]);
      }
    }
  }
#pragma GCC unroll 8
  for (int o = 0; o < kOutputs; ++o) _mm512_mask_storeu_ps(y + (ox + o) * channels + c, valid, clamp(acc[o]));
}

// Outputs [begin, end), all inside the input row, of the 16 channels from `c`: kOutputs at a
// time, then the rest four, two and one at a time.
template <int kK, int kStride, int kOutputs>
void inside_taps(const DepthwiseWindow& w, const float* const* rows, const float* taps, const float* bias,
                 const Clamp& clamp, float* y, int64_t begin, int64_t end, int64_t c, __mmask16 valid) {
  __m512 t[kK * kK];
#pragma GCC unroll 32
  for (int k = 0; k < kK * kK; ++k) t[k] = _mm512_maskz_loadu_ps(valid, taps + k * w.channels + c);
  const __m512 start = bias == nullptr ? _mm512_setzero_ps() : _mm512_maskz_loadu_ps(valid, bias + c);
  int64_t ox = begin;
  for (; ox + kOutputs <= end; ox += kOutputs) tap_outputs<kK, kStride, kOutputs>(w, rows, t, start, clamp, y, ox, c, valid);
  if (kOutputs > 4 && ox + 4 <= end) {
    tap_outputs<kK, kStride, 4>(w, rows, t, start, clamp, y, ox, c, valid);
    ox += 4;
  }
  if (ox + 2 <= end) {
    tap_outputs<kK, kStride, 2>(w, rows, t, start, clamp, y, ox, c, valid);
    ox += 2;
  }
  if (ox < end) tap_outputs<kK, kStride, 1>(w, rows, t, start, clamp, y, ox, c, valid);
}

// Outputs [begin, end), all inside the input row, of the 16 channels from `c`, for the windows
// without a tap-register variant: four at a time, their taps loaded.
void inside(const DepthwiseWindow& w, const float* const* rows, const float* taps, const float* bias,
            const Clamp& clamp, float* y, int64_t begin, int64_t end, int64_t c, const __mmask16* valid) {
  const int64_t kw = w.kernel[1];
  int64_t ox = begin;
  for (; ox + 4 <= end; ox += 4) outputs<4, 1>(w, rows, taps, bias, clamp, y, ox, c, valid, 0, kw);
  switch (end - ox) {
    case 3: return outputs<3, 1>(w, rows, taps, bias, clamp, y, ox, c, valid, 0, kw);
    case 2: return outputs<2, 1>(w, rows, taps, bias, clamp, y, ox, c, valid, 0, kw);
    case 1: return outputs<1, 1>(w, rows, taps, bias, clamp, y, ox, c, valid, 0, kw);
    default: return;
  }
}

// The input lines of outputs [begin, end) in the kernel rows a next output row reads first (the
// last `stride` ones; the others were read for the rows before), fetched ahead into the L1.
void prefetch(const DepthwiseWindow& w, const float* const* rows, int64_t begin, int64_t end) {
  const int64_t stride = w.stride[1];
  const int64_t first = std::max<int64_t>(0, begin * stride - w.pad[1]);
  const int64_t past = std::min(w.in_w, (end - 1) * stride - w.pad[1] + w.kernel[1]);
  for (int64_t ky = std::max<int64_t>(0, w.kernel[0] - w.stride[0]); ky < w.kernel[0]; ++ky) {
    if (rows[ky] == nullptr) continue;
    const char* from = reinterpret_cast<const char*>(rows[ky] + first * w.channels);
    const char* to = reinterpret_cast<const char*>(rows[ky] + past * w.channels);
    for (const char* line = from; line < to; line += 64) _mm_prefetch(line, _MM_HINT_T0);
  }
}

}  // namespace

void depthwise_row(const DepthwiseWindow& w, const float* const* rows, const float* taps, const float* bias,
                   const OutputClamp& output_clamp, float* y) {
  const Clamp clamp(output_clamp);
  const int64_t stride = w.stride[1], pad = w.pad[1], kw = w.kernel[1];
  const auto [inner_lo, inner_hi] = inner_outputs(w);
  // An edge output a block of 64 channels at a time (four chains of multiply-adds).
  auto edge = [&](int64_t ox) {
    const int64_t first = ox * stride - pad;  // the input x of tap 0
    const int64_t kx_lo = std::clamp<int64_t>(-first, 0, kw), kx_hi = std::clamp<int64_t>(w.in_w - first, kx_lo, kw);
    for (int64_t c = 0; c < w.channels; c += 64) {
      const __mmask16 valid[4] = {lanes(w.channels - c), lanes(w.channels - c - 16), lanes(w.channels - c - 32),
                                  lanes(w.channels - c - 48)};
      outputs<1, 4>(w, rows, taps, bias, clamp, y, ox, c, valid, kx_lo, kx_hi);
    }
  };
  for (int64_t ox = 0; ox < inner_lo; ++ox) edge(ox);
  for (int64_t begin = inner_lo; begin < inner_hi; begin += kChunk) {
    const int64_t end = std::min(inner_hi, begin + kChunk);
    if (end < inner_hi) prefetch(w, rows, end, std::min(inner_hi, end + kChunk));
    // The square kernels with a variant: 10 * side + stride (each of one digit, so that no other
    // pair lands on a variant's case).
    const int64_t variant = w.kernel[0] == w.kernel[1] && w.kernel[1] < 10 && stride < 10 ? w.kernel[1] * 10 + stride : 0;
    for (int64_t c = 0; c < w.channels; c += 16) {
      const __mmask16 valid = lanes(w.channels - c);
      switch (variant) {
        case 31: inside_taps<3, 1, 8>(w, rows, taps, bias, clamp, y, begin, end, c, valid); break;
        case 32: inside_taps<3, 2, 4>(w, rows, taps, bias, clamp, y, begin, end, c, valid); break;
        case 51: inside_taps<5, 1, 4>(w, rows, taps, bias, clamp, y, begin, end, c, valid); break;
        case 52: inside_taps<5, 2, 4>(w, rows, taps, bias, clamp, y, begin, end, c, valid); break;
        default: inside(w, rows, taps, bias, clamp, y, begin, end, c, &valid); break;
      }
    }
  }
  for (int64_t ox = inner_hi; ox < w.out_w; ++ox) edge(ox);
}

}  // namespace nrt::exec::cpu::avx512
