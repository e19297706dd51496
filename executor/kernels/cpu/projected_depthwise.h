// A depthwise convolution and the pointwise projection that reads it in one pass (mobilenet_v2's
// inverted-residual blocks: depthwise over C channels, then pointwise C -> O): the depthwise
// rows of a band (at least kProjectedBandPositions outputs) go to a buffer that stays in the L2
// and the projection's tiles read them there, instead of a tensor of C channels written through
// the caches and read back. mobilenet_v2's 56x56x144 depthwise convolution and projection took
// 0.69 ms apart and 0.51 fused, its 112x112x32 ones 0.46 and 0.35 (1 thread; docs/PERFORMANCE.md).
//
// The bits are those of the two convolutions run apart on nrt's kernels: each depthwise output as
// channels_last_depthwise.h computes it, its silu by run_float_activation as the unfused node
// applies it, each projected value as pointwise_product.h's tiles compute it.
#pragma once

#include <cstdint>

#include "executor/kernels/cpu/channels_last_depthwise.h"
#include "executor/kernels/cpu/output_clamp.h"

namespace nrt::exec::cpu {

// A band's depthwise rows hold at least this many outputs (whole rows), so that the
// projection's tiles of 6 to 12 rows run full: on 14-wide rows one row at a time, a band
// took 1.3x its time apart.
inline constexpr int64_t kProjectedBandPositions = 48;

struct ProjectedDepthwise {
  int64_t batches = 0, height = 0;  // the input: [N][H][window.in_w][window.channels], channels-last
  DepthwiseWindow window{};
  int64_t out_h = 0;
  const float* taps = nullptr;  // channels_last_depthwise.h's
  const float* bias = nullptr;  // [C] or null
  OutputClamp clamp;            // relu or hardtanh after the depthwise convolution
  bool silu = false;            // or silu (the clamp then off)
  int64_t out_channels = 0;     // O, the projection's outputs
  const float* packed = nullptr;          // the projection's weights as pointwise_product.h packs them
  const float* project_bias = nullptr;    // [O] or null
  OutputClamp project_clamp;              // relu or hardtanh after the projection
};

// Whether it runs here: pointwise_product_available() and channels_last_depthwise_available().
bool projected_depthwise_available();

// y [N][out_h][out_w][O] (channels-last) from x, bands of output rows over the intra-op threads.
void projected_depthwise(const ProjectedDepthwise& block, const float* x, float* y);

}  // namespace nrt::exec::cpu
