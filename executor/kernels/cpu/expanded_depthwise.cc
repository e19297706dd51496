#include "executor/kernels/cpu/expanded_depthwise.h"

#include <algorithm>
#include <vector>

#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool expanded_depthwise_available() { return pointwise_product_available() && channels_last_depthwise_available(); }

void expanded_depthwise(const ExpandedDepthwise& b, const float* x, float* y) {
  const DepthwiseWindow& w = b.window;
  const int64_t kernel_h = w.kernel[0], expanded_row = b.width * b.channels;
  const int64_t in_row = b.width * b.in_channels, out_row = w.out_w * b.channels;
  const int64_t blocks = (b.channels + 15) / 16;
  parallel_for(b.batches * b.out_h, 1, [&](int64_t begin, int64_t end) {
    // Input row iy's expansion lives in ring row iy % kernel_h: a kernel's rows are consecutive.
    std::vector<float> ring(static_cast<size_t>(kernel_h * expanded_row));
    std::vector<int64_t> held(static_cast<size_t>(kernel_h), -1);  // the (image, row) each ring row holds
    std::vector<const float*> rows(static_cast<size_t>(kernel_h));
    for (int64_t r = begin; r < end; ++r) {
      const int64_t image = r / b.out_h, oy = r % b.out_h;
      for (int64_t ky = 0; ky < kernel_h; ++ky) {
        const int64_t iy = oy * w.stride[0] - w.pad[0] + ky;
        if (iy < 0 || iy >= b.height) {
          rows[static_cast<size_t>(ky)] = nullptr;
          continue;
        }
        const auto at = static_cast<size_t>(iy % kernel_h);
        float* expanded = ring.data() + at * static_cast<size_t>(expanded_row);
        const int64_t key = image * b.height + iy;
        if (held[at] != key) {
          avx512::pointwise_rows(0, b.width, b.in_channels, b.channels, b.packed, x + key * in_row, b.in_channels,
                                 b.expand_bias, b.expand_clamp, expanded, b.channels, 0, blocks);
          if (b.expand_silu) run_float_activation(FloatActivation::kSilu, expanded, expanded, expanded_row);
          held[at] = key;
        }
        rows[static_cast<size_t>(ky)] = expanded;
      }
      avx512::depthwise_row(w, rows.data(), b.taps, b.bias, b.clamp, y + r * out_row);
    }
  });
}

}  // namespace nrt::exec::cpu
