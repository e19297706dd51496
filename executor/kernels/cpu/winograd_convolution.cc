#include "executor/kernels/cpu/winograd_convolution.h"

#include <algorithm>
#include <cstdlib>
#include <new>
#include <tuple>

#include "executor/kernels/cpu/channels_last_reorder.h"
#include "executor/kernels/cpu/cpu_features.h"
#include "executor/kernels/cpu/kept_by_storage.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/winograd_parts.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {
namespace {

using winograd::kChannelBlock;
using winograd::kTileLanes;

// The transformed inputs and products of one chunk together stay under this many bytes, in the
// second-level cache, but a chunk holds at least kChunkTiles tiles: each chunk reads all of U again
// (256 channels: 4 MiB). Measured on resnet18's 3x3 layers (docs/PERFORMANCE.md): at 1 MiB, 64
// channels at 56x56 took 1.36 ms, at 256 KiB 1.61 and at 2 MiB 1.49; 256 channels at 14x14 took
// 2.46 ms in chunks of one tile row, 1.44 in one chunk.
constexpr int64_t kChunkBytes = int64_t{1} << 20;
constexpr int64_t kChunkTiles = 64;

// G of F(2x2, 3x3) and of F(4x4, 3x3) (Lavin and Gray's, points 0, +-1, +-2 for the larger).
constexpr double kG2[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
constexpr double kG4[6][3] = {{0.25, 0, 0},
                              {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                              {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                              {1.0 / 24, 1.0 / 12, 1.0 / 6},
                              {1.0 / 24, -1.0 / 12, 1.0 / 6},
                              {0, 0, 1}};

// The floats of U: [points][blocks][C][width], output channel k in block k / width, lane k % width
// (width 6 for NCHW, 16 for channels-last); `tile` 2 or 4 outputs a side.
size_t transformed_count(int64_t out_channels, int64_t channels, int64_t width, int tile) {
  const int64_t blocks = (out_channels + width - 1) / width;
  return static_cast<size_t>((tile + 2) * (tile + 2) * blocks * channels * width);
}

// U = G g G^T per channel pair (in double, rounded once), laid out as winograd_parts.h's U.
std::shared_ptr<float[]> transform_weights(const float* weight, int64_t out_channels, int64_t channels, int64_t width,
                                           int tile) {
  const int side = tile + 2;
  const double* g_rows = tile == 2 ? &kG2[0][0] : &kG4[0][0];
  const int64_t blocks = (out_channels + width - 1) / width;
  // On 64-byte lines: the products load U's panels as whole 512-bit vectors, and split loads made
  // them 5-10% slower (a scratch harness on resnet18's shapes).
  const size_t count = transformed_count(out_channels, channels, width, tile);
  std::shared_ptr<float[]> u(static_cast<float*>(std::aligned_alloc(64, (count * sizeof(float) + 63) / 64 * 64)),
                             std::free);
  if (!u) throw std::bad_alloc();
  std::fill(u.get(), u.get() + count, 0.0f);
  for (int64_t k = 0; k < out_channels; ++k) {
    const int64_t block = k / width, lane = k % width;
    for (int64_t c = 0; c < channels; ++c) {
      const float* g = weight + (k * channels + c) * 9;
      double t[6][3] = {};  // G g
      for (int i = 0; i < side; ++i) {
        for (int j = 0; j < 3; ++j) {
          for (int l = 0; l < 3; ++l) t[i][j] += g_rows[i * 3 + l] * g[l * 3 + j];
        }
      }
      for (int i = 0; i < side; ++i) {
        for (int j = 0; j < side; ++j) {
          double value = 0;  // (G g G^T)[i][j]
          for (int l = 0; l < 3; ++l) value += t[i][l] * g_rows[j * 3 + l];
          u[static_cast<size_t>((((i * side + j) * blocks + block) * channels + c) * width + lane)] =
              static_cast<float>(value);
        }
      }
    }
  }
  return u;
}

// By weight address, shape and layout, while the weights' storage lives; at most 1 GiB (about 2x
// the bytes of the 3x3 weights they come from: 16 values for 9).
using KeptTransforms =
    KeptByStorage<std::tuple<const float*, int64_t, int64_t, int64_t, int>, std::shared_ptr<float[]>, 1>;

std::shared_ptr<float[]> transformed_weights(const float* weight, int64_t out_channels, int64_t channels,
                                             int64_t width, int tile, const std::shared_ptr<const Storage>& storage) {
  if (!storage) return transform_weights(weight, out_channels, channels, width, tile);
  static KeptTransforms kept(size_t{1} << 30);
  const auto key = std::make_tuple(weight, out_channels, channels, width, tile);
  if (auto found = kept.find(key, {storage})) return *found;
  const size_t bytes = transformed_count(out_channels, channels, width, tile) * sizeof(float);
  bool now_kept = false;
  std::shared_ptr<float[]> u =
      kept.keep(key, {storage}, transform_weights(weight, out_channels, channels, width, tile), bytes, &now_kept);
  // As for oneDNN's kept weights: the file's pages of the weights need not stay resident.
  if (now_kept) storage->release_pages(weight, static_cast<size_t>(out_channels * channels * 9) * sizeof(float));
  return u;
}

// F(4x4, 3x3) on channels-last tensors where its tiles of 4x4 outputs cover at most 15% more
// than the outputs: 64 channels at 56x56 ran 2.37x oneDNN's speed with them, 1.72x with 2x2 tiles;
// 256 at 14x14 (tiles over 16x16, 31% more), 1.25x against 1.54x.
bool large_tiles(const OneDnnConvolution& s) {
  const int64_t covered = (s.out[1] + 3) / 4 * 4 * ((s.out[2] + 3) / 4 * 4);
  return (s.input_channels_last || s.output_channels_last) && covered * 100 <= s.out[1] * s.out[2] * 115;
}

// Threads taking whole chunks each (`lanes` of them), where the chunks share evenly among the
// intra-op threads (each thread's share at most 1.25x the even one); else 1, and each chunk's passes
// split over the threads. Split by chunks, a thread transforms, multiplies and transforms back the
// tiles it read, in its own caches: resnet18's 64-channel layers at 56x56 (4 chunks; 0.77 ms at 1
// thread) took 0.57-0.59 ms at 2 split within chunks, where V came to the products from the other
// core, and 0.46-0.49 split by chunks.
int64_t chunk_lanes(int64_t chunks) {
  const int64_t threads = std::max(1, intra_op_threads());
  if (threads == 1 || chunks < threads) return 1;
  const int64_t per_lane = (chunks + threads - 1) / threads;
  return per_lane * threads * 4 <= chunks * 5 ? (chunks + per_lane - 1) / per_lane : 1;
}

}  // namespace

int winograd_tile(const OneDnnConvolution& s) {
  if (!winograd_takes(s)) return 0;
  return large_tiles(s) ? 4 : 2;
}

bool winograd_takes(const OneDnnConvolution& s) {
  if (!cpu_has_avx2_fma() || s.groups != 1) return false;
  // Channels-last moves 8 channels at a time.
  const bool channels_last = s.input_channels_last || s.output_channels_last;
  if (channels_last && (s.channels % 8 != 0 || s.out_channels % 8 != 0)) return false;
  if (s.in[0] != 1 || s.kernel[0] != 1 || s.out[0] != 1 || s.pad_begin[0] != 0 || s.pad_end[0] != 0) return false;
  for (int i = 1; i < 3; ++i) {
    if (s.kernel[i] != 3 || s.stride[i] != 1 || s.dilation[i] != 1) return false;
    if (s.pad_begin[i] < 0 || s.pad_begin[i] > 2 || s.pad_end[i] < 0 || s.pad_end[i] > 2) return false;
  }
  if (s.in[2] >= (int64_t{1} << 30)) return false;  // the input pass's lane arithmetic is 32-bit
  // Under 8 outputs a side, a quarter or more of the tiles' outputs fall past the edge (7x7: 49 of
  // 64 used) and oneDNN's direct convolution was faster (resnet18's 512 channels at 7x7: 0.90x).
  // With 16 channels on NCHW tensors, oneDNN was too (0.89x at 56x56; channels-last, 1.24x).
  const int64_t fewest = channels_last ? 16 : 24;
  return s.channels >= fewest && s.out_channels >= fewest && s.batches >= 1 && s.out[1] >= 8 && s.out[2] >= 8;
}

OneDnnOutcome winograd_convolution_forward(const OneDnnConvolution& s, const float* input, const float* weight,
                                           const float* bias, float* output,
                                           const std::shared_ptr<const Storage>& weight_storage) {
  const int tile = winograd_tile(s);
  if (tile == 0) return OneDnnOutcome::kRefused;
  const bool channels_last = s.input_channels_last || s.output_channels_last;
  const int points = (tile + 2) * (tile + 2);
  winograd::Geometry g{};
  g.channels = s.channels;
  g.out_channels = s.out_channels;
  g.in_h = s.in[1];
  g.in_w = s.in[2];
  g.out_h = s.out[1];
  g.out_w = s.out[2];
  g.pad_top = s.pad_begin[1];
  g.pad_left = s.pad_begin[2];
  g.tiles_h = (g.out_h + tile - 1) / tile;
  g.tiles_w = (g.out_w + tile - 1) / tile;
  g.k_blocks = (g.out_channels + kChannelBlock - 1) / kChannelBlock;
  const int64_t k_padded = channels_last ? winograd::k_panels(g) * kTileLanes : g.k_blocks * kChannelBlock;

  const std::shared_ptr<float[]> u =
      transformed_weights(weight, g.out_channels, g.channels, channels_last ? kTileLanes : kChannelBlock, tile, weight_storage);
  winograd::Epilogue epilogue;
  epilogue.bias = bias;
  switch (s.activation.kind) {
    case ConvolutionActivation::Kind::kRelu: epilogue.kind = 1; break;
    case ConvolutionActivation::Kind::kClip:
      epilogue.kind = 2;
      epilogue.low = static_cast<float>(s.activation.min);
      epilogue.high = static_cast<float>(s.activation.max);
      break;
    default: break;
  }

  // Whole tile rows per chunk (at least one); a chunk's tiles padded to whole product blocks.
  const int64_t all_rows = s.batches * g.tiles_h;
  const int64_t bytes_per_tile = points * (g.channels + k_padded) * int64_t{sizeof(float)};
  const int64_t chunk_tiles = std::max(kChunkBytes / bytes_per_tile, kChunkTiles);
  const int64_t chunk_rows = std::clamp<int64_t>(chunk_tiles / g.tiles_w, 1, all_rows);
  const int64_t block = channels_last ? kChannelBlock : kTileLanes;
  auto padded_of = [&](int64_t tiles) { return (tiles + block - 1) / block * block; };
  const int64_t most = padded_of(chunk_rows * g.tiles_w);
  const int64_t v_block = channels_last ? winograd::channels_last_v_xi_stride(g, most) : winograd::v_xi_stride(g, most);
  const int64_t m_block = channels_last ? winograd::channels_last_m_xi_stride(g, most) : winograd::m_xi_stride(g, most);
  // The side that is NCHW where the other is channels-last, reordered.
  const int64_t in_count = s.batches * g.channels * g.in_h * g.in_w, out_count = s.batches * g.out_channels * g.out_h * g.out_w;
  const int64_t in_copy = channels_last && !s.input_channels_last ? in_count : 0;
  const int64_t out_copy = channels_last && !s.output_channels_last ? out_count : 0;
  // 8 floats past M: the NCHW output pass reads whole vectors of a tile row, up to 7 tiles past the
  // last (it stores none of them). Each lane of chunks (below) has its own V and M, on whole lines.
  const int64_t chunk_floats = (points * (v_block + m_block) + 8 + 15) / 16 * 16;
  const int64_t chunks = (all_rows + chunk_rows - 1) / chunk_rows, lanes = chunk_lanes(chunks);
  float* const scratch = scratch_floats(lanes * chunk_floats + in_copy + out_copy);
  float* const final_output = output;
  if (in_copy > 0) {
    float* copy = scratch + lanes * chunk_floats;
    reorder_channels(input, s.batches, g.channels, g.in_h * g.in_w, true, copy);
    input = copy;
  }
  if (out_copy > 0) output = scratch + lanes * chunk_floats + in_copy;

  // The three passes over the tile rows [first, first + chunk_rows) in `v` and its M after it; each
  // split over the intra-op threads unless it runs inside a lane of chunks (then serially).
  const auto run_chunk = [&](int64_t first, float* v) {
    float* m = v + points * v_block;
    const int64_t rows = std::min(chunk_rows, all_rows - first), tiles = rows * g.tiles_w, padded = padded_of(tiles);
    // The tiles past the chunk's, up to a whole block: zero, so that their products are finite.
    for (int64_t xi = 0; xi < points && padded > tiles; ++xi) {
      if (channels_last) {
        float* past = v + xi * winograd::channels_last_v_xi_stride(g, padded) + tiles * g.channels;
        std::fill(past, past + (padded - tiles) * g.channels, 0.0f);
        continue;
      }
      for (int64_t c = 0; c < g.channels; ++c) {
        float* lanes_of_c = v + xi * winograd::v_xi_stride(g, padded) + c * padded;
        std::fill(lanes_of_c + tiles, lanes_of_c + padded, 0.0f);
      }
    }
    if (channels_last) {
      parallel_for(rows * (g.channels / 8), 16, [&](int64_t begin, int64_t end) {
        winograd::transform_inputs_channels_last(g, tile, input, first, padded, begin, end, v);
      });
      if (cpu_has_avx512f()) {
        parallel_for(points * winograd::k_panel_groups(g), 1, [&](int64_t begin, int64_t end) {
          winograd::multiply_channels_last_avx512(g, u.get(), v, padded, begin, end, m);
        });
      } else {
        parallel_for(points * winograd::k_panels(g), 1, [&](int64_t begin, int64_t end) {
          winograd::multiply_channels_last(g, u.get(), v, padded, begin, end, m);
        });
      }
      parallel_for(rows * (g.out_channels / 8), 16, [&](int64_t begin, int64_t end) {
        winograd::transform_outputs_channels_last(g, tile, m, first, padded, begin, end, epilogue, output);
      });
      return;
    }
    parallel_for(g.channels * rows, 16, [&](int64_t begin, int64_t end) {
      winograd::transform_inputs(g, input, first, rows, padded, begin, end, v);
    });
    parallel_for(16 * (padded / kTileLanes), 1, [&](int64_t begin, int64_t end) {
      if (cpu_has_avx512f()) {
        winograd::multiply_avx512(g, u.get(), v, padded, begin, end, m);
      } else {
        winograd::multiply(g, u.get(), v, padded, begin, end, m);
      }
    });
    parallel_for(g.out_channels * rows, 16, [&](int64_t begin, int64_t end) {
      winograd::transform_outputs(g, m, first, rows, padded, begin, end, epilogue, output);
    });
  };
  if (lanes > 1) {
    const int64_t per_lane = (chunks + lanes - 1) / lanes;
    parallel_for(lanes, 1, [&](int64_t begin, int64_t end) {
      for (int64_t lane = begin; lane < end; ++lane) {
        for (int64_t chunk = lane * per_lane; chunk < std::min(chunks, (lane + 1) * per_lane); ++chunk) {
          run_chunk(chunk * chunk_rows, scratch + lane * chunk_floats);
        }
      }
    });
  } else {
    for (int64_t first = 0; first < all_rows; first += chunk_rows) run_chunk(first, scratch);
  }
  if (out_copy > 0) reorder_channels(output, s.batches, g.out_channels, g.out_h * g.out_w, false, final_output);
  return s.activation.kind == ConvolutionActivation::Kind::kSilu ? OneDnnOutcome::kActivationLeftToCaller
                                                                  : OneDnnOutcome::kDone;
}

}  // namespace nrt::exec::cpu
