// Float32 depthwise 2-D convolutions (one channel per group, one output per channel) on
// channels-last rows, with AVX-512 F: mobilenet_v2's 3x3 and efficientnet's 3x3 and 5x5, at stride
// 1 or 2. Output y[oy][ox][c] is bias[c] plus the taps in order (ky, then kx), each one
// multiply-add w[ky][kx][c] * x[iy][ix][c] at iy = oy * stride - pad + ky, ix = ox * stride - pad + kx,
// a tap in the padding skipped, then clamped (output_clamp.h). The same bits whichever rows or
// threads compute an output, and wherever its input rows come from.
//
// Against oneDNN's depthwise kernel in mobilenet_v2 (`nrt-run --profile`, 1 thread): 1.15-1.3x
// on its 28x28 and smaller layers, 0.86x on its first stride-2 one, whose 4.8 MB input waits on
// the L3 either way (expanded_depthwise.h runs it from the L2 instead); the model's time the same.
// Its reason to be: the fused block computes its outputs, and the unfused nodes give the same bits.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include "executor/kernels/cpu/output_clamp.h"

namespace nrt::exec::cpu {

// One row's window: kernel, stride and padding (before) as height then width; the input rows
// in_w positions wide, the output rows out_w; each position `channels` floats.
struct DepthwiseWindow {
  int64_t kernel[2], stride[2], pad[2];
  int64_t in_w, out_w, channels;
};

// The outputs [first, second) of a row whose windows lie inside the input row; the others, at its
// edges, skip the padding's taps (one output at a time, its taps loaded: slower).
inline std::pair<int64_t, int64_t> inner_outputs(const DepthwiseWindow& w) {
  const int64_t lo = std::min(w.out_w, (w.pad[1] + w.stride[1] - 1) / w.stride[1]);
  const int64_t last = w.in_w - w.kernel[1] + w.pad[1];  // the input x of the last inner output's tap 0, plus pad
  return {lo, std::max(lo, std::min(w.out_w, last < 0 ? 0 : last / w.stride[1] + 1))};
}

// rows[ky], ky < kernel[0]: the input row of `image` ([in_h][in_w][channels]) that output row
// `oy`'s kernel row ky reads, or null where that row is padding.
inline void kernel_rows(const DepthwiseWindow& w, const float* image, int64_t in_h, int64_t oy, const float** rows) {
  for (int64_t ky = 0; ky < w.kernel[0]; ++ky) {
    const int64_t iy = oy * w.stride[0] - w.pad[0] + ky;
    rows[ky] = iy >= 0 && iy < in_h ? image + iy * w.in_w * w.channels : nullptr;
  }
}

// Whether these convolutions run here: a CPU with AVX-512 F (cpu_has_avx512f).
bool channels_last_depthwise_available();

// weight [channels, 1, kh, kw] (contiguous) as the kernels read it: taps[(ky * kw + kx) * channels + c].
void depthwise_taps(const float* weight, int64_t channels, int64_t kh, int64_t kw, float* taps);

// `batches` images of in_h rows in, out_h rows out, both channels-last and dense ([N][H][W][C]),
// rows over the intra-op threads; bias may be null.
void channels_last_depthwise(const DepthwiseWindow& window, int64_t batches, int64_t in_h, int64_t out_h,
                             const float* x, const float* taps, const float* bias, const OutputClamp& clamp, float* y);

namespace avx512 {
// One output row ([out_w][channels]) from rows[ky], ky < kernel[0]: the input row its taps read
// ([in_w][channels]), or null where that row is padding (channels_last_depthwise_avx512.cc).
void depthwise_row(const DepthwiseWindow& window, const float* const* rows, const float* taps, const float* bias,
                   const OutputClamp& clamp, float* y);
}  // namespace avx512

}  // namespace nrt::exec::cpu
