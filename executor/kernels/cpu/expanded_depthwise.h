// An inverted-residual block's expansion and depthwise convolution in one pass (mobilenet_v2's
// and efficientnet's blocks: pointwise C -> E channels, then depthwise over E): the expanded rows
// are computed as the depthwise rows need them, into a ring of kernel-height rows that stays in the
// L2, instead of a tensor E / C times the input's size written through the caches and read back
// (mobilenet_v2's first: 4.8 MB, its depthwise convolution then waiting on the L3).
//
// The bits are those of the two convolutions run apart on nrt's kernels: each expanded value as
// pointwise_product.h's tiles compute it, its silu by run_float_activation as the unfused node
// applies it, each output as channels_last_depthwise.h computes it.
#pragma once

#include <cstdint>

#include "executor/kernels/cpu/channels_last_depthwise.h"
#include "executor/kernels/cpu/output_clamp.h"

namespace nrt::exec::cpu {

struct ExpandedDepthwise {
  int64_t batches = 0, height = 0, width = 0, in_channels = 0;  // the input: [N][H][W][C], channels-last
  int64_t channels = 0;                                         // E, the expansion's outputs
  const float* packed = nullptr;                // the expansion's weights as pointwise_product.h packs them
  const float* expand_bias = nullptr;           // [E] or null
  OutputClamp expand_clamp;                     // relu or hardtanh after the expansion
  bool expand_silu = false;                     // or silu (the clamp then off)
  DepthwiseWindow window{};                     // over rows `width` wide of E channels
  int64_t out_h = 0;
  const float* taps = nullptr;  // channels_last_depthwise.h's
  const float* bias = nullptr;  // [E] or null
  OutputClamp clamp;
};

// Whether it runs here: pointwise_product_available() and channels_last_depthwise_available().
bool expanded_depthwise_available();

// y [N][out_h][out_w][E] (channels-last) from x, output rows over the intra-op threads (each
// thread's first rows expand the input rows its kernel shares with the thread before).
void expanded_depthwise(const ExpandedDepthwise& block, const float* x, float* y);

}  // namespace nrt::exec::cpu
