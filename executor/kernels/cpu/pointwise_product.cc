#include "executor/kernels/cpu/pointwise_product.h"

#include <algorithm>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool pointwise_product_available() { return cpu_has_avx512f(); }

void few_position_product(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                          int64_t x_position, const float* bias, float* y, int64_t y_position, int64_t y_output) {
  const int64_t blocks = (out + 15) / 16;
  // A thread's share streams at least 64 KiB of weights (as matrix_vector_product's: a block is
  // 64 bytes an input), in whole groups of the four blocks read side by side.
  const int64_t grain = std::max<int64_t>(4, ((int64_t{1} << 10) / std::max<int64_t>(in, 1) + 3) / 4 * 4);
  parallel_for(blocks, grain, [&](int64_t begin, int64_t end) {
    avx512::few_position_blocks(positions, in, out, packed, x, x_position, bias, y, y_position, y_output, begin,
                                end - begin);
  });
}

void pointwise_product(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                       int64_t x_position, const float* bias, const OutputClamp& clamp, float* y,
                       int64_t y_position) {
  const int64_t blocks = (out + 15) / 16, groups = (blocks + 3) / 4;
  // Threads take groups of four blocks, each over every row, where there are two groups a thread;
  // else rows (efficientnet's 8x8 products have 3 to 15 blocks).
  if (groups >= 2 * intra_op_threads()) {
    parallel_for(groups, 1, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * 4;
      avx512::pointwise_rows(0, positions, in, out, packed, x, x_position, bias, clamp, y, y_position, first,
                             std::min(blocks, end * 4) - first);
    });
    return;
  }
  // Rows in whole bands of kPointwiseRowUnit, which every tile shape divides (none recomputed).
  const int64_t units = (positions + kPointwiseRowUnit - 1) / kPointwiseRowUnit;
  parallel_for(units, 1, [&](int64_t begin, int64_t end) {
    avx512::pointwise_rows(begin * kPointwiseRowUnit, std::min(positions, end * kPointwiseRowUnit), in, out, packed,
                           x, x_position, bias, clamp, y, y_position, 0, blocks);
  });
}

}  // namespace nrt::exec::cpu
