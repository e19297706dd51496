#include "executor/kernels/cpu/few_position_product.h"

#include <algorithm>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool few_position_product_available() { return cpu_has_avx512f(); }

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

}  // namespace nrt::exec::cpu
