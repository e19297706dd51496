#include "executor/kernels/cpu/pointwise_product.h"

#include <algorithm>
#include <numeric>

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

namespace {

// The rows a thread's share comes in: a number every tile over these blocks divides
// (pointwise_product_avx512.cc: four blocks on 6 rows, the last three on 8, two or one on 12), so
// that no thread computes a row twice.
int64_t row_unit(int64_t blocks) {
  const int64_t rest = blocks % 4, last = rest == 0 ? 6 : rest == 3 ? 8 : 12;
  return blocks >= 4 ? std::lcm(int64_t{6}, last) : last;
}

}  // namespace

void pointwise_product(int64_t positions, int64_t in, int64_t out, const float* packed, const float* x,
                       int64_t x_position, const float* bias, const OutputClamp& clamp, float* y,
                       int64_t y_position) {
  const int64_t blocks = (out + 15) / 16, groups = (blocks + 3) / 4;
  const int64_t threads = std::max(1, intra_op_threads());
  // Threads take groups of four blocks, each over every row, where there are two groups a thread;
  // else rows (efficientnet's 8x8 products have 3 to 15 blocks).
  if (groups >= 2 * threads) {
    parallel_for(groups, 1, [&](int64_t begin, int64_t end) {
      const int64_t first = begin * 4;
      avx512::pointwise_rows(0, positions, in, out, packed, x, x_position, bias, clamp, y, y_position, first,
                             std::min(blocks, end * 4) - first);
    });
    return;
  }
  const int64_t unit = row_unit(blocks), units = (positions + unit - 1) / unit;
  // Blocks, each over every row, where the rows are too few to share evenly (efficientnet's 4x4
  // products: 16 rows of 5 or 7 blocks, one unit of rows, ran on one thread): where the largest
  // share of row-blocks is a tenth smaller so.
  const int64_t by_rows = std::min(positions, (units + threads - 1) / threads * unit) * blocks;
  const int64_t by_blocks = positions * ((blocks + threads - 1) / threads);
  if (threads > 1 && by_blocks * 10 < by_rows * 9) {
    parallel_for(blocks, 1, [&](int64_t begin, int64_t end) {
      avx512::pointwise_rows(0, positions, in, out, packed, x, x_position, bias, clamp, y, y_position, begin,
                             end - begin);
    });
    return;
  }
  parallel_for(units, 1, [&](int64_t begin, int64_t end) {
    avx512::pointwise_rows(begin * unit, std::min(positions, end * unit), in, out, packed, x, x_position, bias,
                           clamp, y, y_position, 0, blocks);
  });
}

}  // namespace nrt::exec::cpu
