// The three passes of a Winograd convolution (winograd_convolution.h), over one chunk of tile
// rows: F(2x2, 3x3) on NCHW and channels-last tensors, F(4x4, 3x3) on channels-last ones (at the
// end). Compiled with AVX2 and FMA (winograd_parts_avx2.cc; the products also with AVX-512 F,
// winograd_parts_avx512.cc); called only on CPUs that have them.
//
// A tile is a 2x2 block of outputs, read from the 4x4 block of inputs around it. Tiles are
// numbered n, then tile row, then tile column; a chunk holds whole tile rows (`rows` of them, from
// tile row `first_row` of all images), `tiles` = rows * tiles_w of them, padded to `stride` (a
// multiple of kTileLanes) in the buffers below:
//   U: the transformed weights, [16][k_blocks][C][kChannelBlock] (output channel k = block * 6 + lane;
//      zero past K);
//   V: the transformed inputs, [16][C][stride], blocks v_xi_stride apart;
//   M: their products, [16][k_blocks * kChannelBlock][stride], blocks m_xi_stride apart:
//      M[xi] = U[xi]^T V[xi].
// Every element is computed by one thread in a fixed order, so the result does not depend on how
// the passes are split over threads.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu::winograd {

constexpr int64_t kTileLanes = 16;     // tiles per product panel: two 8-float vectors
constexpr int64_t kChannelBlock = 6;   // output channels per product block: 12 accumulators

struct Geometry {
  int64_t channels, out_channels;
  int64_t in_h, in_w, out_h, out_w;
  int64_t pad_top, pad_left;
  int64_t tiles_h, tiles_w;  // ceil(out / outputs a tile side)
  int64_t k_blocks;          // ceil(out_channels / kChannelBlock)
};

// Floats from one xi's block of V, or of M, to the next: a tile row's 16 entries are stored 16
// blocks apart, and blocks a multiple of 4 KiB apart all fall in one set of the first-level cache
// (64 channels of 256 tiles: 64 KiB); a line more keeps them apart.
inline int64_t v_xi_stride(const Geometry& g, int64_t stride) { return g.channels * stride + kTileLanes; }
inline int64_t m_xi_stride(const Geometry& g, int64_t stride) { return g.k_blocks * kChannelBlock * stride + kTileLanes; }

// Channels-last inputs and outputs ([N, H, W, C] in memory; channels and output channels
// multiples of 8) keep channels innermost throughout, vectors over 8 channels in the transforms and
// 16 output channels in the products; a chunk's tiles are padded to `padded` (a multiple of
// kChannelBlock, tiles past the chunk's zero):
//   U: [16][k_panels][C][16] (output channel k = panel * 16 + lane; zero past K);
//   V: [16][padded][C], blocks channels_last_v_xi_stride apart;
//   M: [16][padded][k_panels * 16], blocks channels_last_m_xi_stride apart: M[xi] = V[xi] U[xi].
inline int64_t k_panels(const Geometry& g) { return (g.out_channels + kTileLanes - 1) / kTileLanes; }
inline int64_t channels_last_v_xi_stride(const Geometry& g, int64_t padded) { return padded * g.channels + kTileLanes; }
inline int64_t channels_last_m_xi_stride(const Geometry& g, int64_t padded) {
  return padded * k_panels(g) * kTileLanes + kTileLanes;
}

// The activation applied as outputs are written: 0 none, 1 relu (NaN stays), 2 clip to [low, high].
struct Epilogue {
  const float* bias = nullptr;  // [out_channels] or null
  int kind = 0;
  float low = 0, high = 0;
};

// V's entries for items [begin, end) of channels * rows, item i = channel (i / rows) of tile row
// first_row + i % rows. `input` is [N, C, H, W].
void transform_inputs(const Geometry& g, const float* input, int64_t first_row, int64_t rows, int64_t stride,
                      int64_t begin, int64_t end, float* v);

// M's panels [begin, end) of 16 * (stride / kTileLanes), item i = xi (i / panels), panel i % panels.
void multiply(const Geometry& g, const float* u, const float* v, int64_t stride, int64_t begin, int64_t end,
              float* m);

// multiply with AVX-512 F (winograd_parts_avx512.cc; called only where cpu_has_avx512f() holds):
// the same items, up to four blocks of output channels at a time; the same bits.
void multiply_avx512(const Geometry& g, const float* u, const float* v, int64_t stride, int64_t begin, int64_t end,
                     float* m);

// Outputs of items [begin, end) of out_channels * rows, item i = output channel (i / rows) of tile
// row first_row + i % rows, with the bias added and the epilogue's activation. `output` is
// [N, K, OH, OW].
void transform_outputs(const Geometry& g, const float* m, int64_t first_row, int64_t rows, int64_t stride,
                       int64_t begin, int64_t end, const Epilogue& epilogue, float* output);

// The same passes on channels-last tensors, with tiles of `tile` (2 or 4) outputs a side. F(4x4,
// 3x3) reads 6x6 inputs a tile (the geometry's tiles_h and tiles_w count 4x4 tiles) and has 36
// points where F(2x2, 3x3) has 16 (xi = 6 * row + column; U, V and M as above with 36 blocks).
// Inputs: items of rows * (C / 8), item i = channels [8 (i % (C / 8)), + 8) of tile row
// first_row + i / (C / 8). Products: items of points * k_panels, item i = xi (i / k_panels), panel
// i % k_panels. Outputs: items of rows * (K / 8), as the inputs'.
void transform_inputs_channels_last(const Geometry& g, int tile, const float* input, int64_t first_row,
                                    int64_t padded, int64_t begin, int64_t end, float* v);
void multiply_channels_last(const Geometry& g, const float* u, const float* v, int64_t padded, int64_t begin,
                            int64_t end, float* m);
// multiply_channels_last with AVX-512 F (winograd_parts_avx512.cc; called only where
// cpu_has_avx512f() holds), up to kPanelGroup panels an item: items of points * k_panel_groups,
// item i = xi (i / groups), panels from kPanelGroup * (i % groups). The same bits.
constexpr int64_t kPanelGroup = 4;
inline int64_t k_panel_groups(const Geometry& g) { return (k_panels(g) + kPanelGroup - 1) / kPanelGroup; }
void multiply_channels_last_avx512(const Geometry& g, const float* u, const float* v, int64_t padded, int64_t begin,
                                   int64_t end, float* m);
void transform_outputs_channels_last(const Geometry& g, int tile, const float* m, int64_t first_row, int64_t padded,
                                     int64_t begin, int64_t end, const Epilogue& epilogue, float* output);

}  // namespace nrt::exec::cpu::winograd
