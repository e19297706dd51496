// The relu or hardtanh a convolution kernel of nrt's own applies as it writes each output
// (pointwise_product.h, channels_last_depthwise.h), rather than in a pass of its own
// (onednn_convolution.h's output_clamp_of gives a fused node's).
#pragma once

namespace nrt::exec::cpu {

// Outputs limited to [lo, hi] (relu: [0, inf); hardtanh: [min, max]) where `on`; NaN stays NaN.
struct OutputClamp {
  bool on = false;
  float lo = 0.0f, hi = 0.0f;
};

}  // namespace nrt::exec::cpu
