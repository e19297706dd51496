#include "executor/kernels/cpu/channels_last_reorder.h"

#include <algorithm>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool reorder_channels_takes(int64_t channels) {
  return cpu_has_avx2_fma() && channels > 0 && channels % 8 == 0;
}

void reorder_channels(const float* from, int64_t batches, int64_t channels, int64_t positions, bool to_last, float* to) {
  // A thread's part: at least four items and 2^14 floats (a whisper residual add's 64x128 on two
  // threads took 6.4 us against 3.4 on one).
  const int64_t per_item = std::max<int64_t>(1, 8 * positions);
  const int64_t grain = std::max<int64_t>(4, ((int64_t{1} << 14) + per_item - 1) / per_item);
  parallel_for(batches * (channels / 8), grain, [&](int64_t begin, int64_t end) {
    avx2::reorder_channel_blocks(from, channels, positions, to_last, begin, end, to);
  });
}

}  // namespace nrt::exec::cpu
