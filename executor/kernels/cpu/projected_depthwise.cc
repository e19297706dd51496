#include "executor/kernels/cpu/projected_depthwise.h"

#include <algorithm>
#include <vector>

#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool projected_depthwise_available() { return pointwise_product_available() && channels_last_depthwise_available(); }

void projected_depthwise(const ProjectedDepthwise& b, const float* x, float* y) {
  const DepthwiseWindow& w = b.window;
  const int64_t kernel_h = w.kernel[0], in_row = w.in_w * w.channels, row = w.out_w * w.channels;
  const int64_t band_rows = std::max<int64_t>(1, (kProjectedBandPositions + w.out_w - 1) / w.out_w);
  const int64_t bands = (b.out_h + band_rows - 1) / band_rows;
  const int64_t blocks = (b.out_channels + 15) / 16;
  parallel_for(b.batches * bands, 1, [&](int64_t begin, int64_t end) {
    std::vector<float> convolved(static_cast<size_t>(band_rows * row));
    std::vector<const float*> rows(static_cast<size_t>(kernel_h));
    for (int64_t band = begin; band < end; ++band) {
      const int64_t image = band / bands, first = band % bands * band_rows;
      const int64_t last = std::min(b.out_h, first + band_rows);
      for (int64_t oy = first; oy < last; ++oy) {
        kernel_rows(w, x + image * b.height * in_row, b.height, oy, rows.data());
        float* out = convolved.data() + (oy - first) * row;
        avx512::depthwise_row(w, rows.data(), b.taps, b.bias, b.clamp, out);
        if (b.silu) run_float_activation(FloatActivation::kSilu, out, out, row);
      }
      const int64_t positions = (last - first) * w.out_w;
      avx512::pointwise_rows(0, positions, w.channels, b.out_channels, b.packed, convolved.data(), w.channels,
                             b.project_bias, b.project_clamp, y + (image * b.out_h + first) * w.out_w * b.out_channels,
                             b.out_channels, 0, blocks);
    }
  });
}

}  // namespace nrt::exec::cpu
