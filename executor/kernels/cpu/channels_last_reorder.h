// Float32 tensors between NCHW and channels-last: [N, C, P] to [N, P, C] (P positions) or back,
// C a multiple of 8, in 8x8 transposes held in AVX2 registers, over the intra-op threads. 64
// channels at 56x56 take 0.035 ms either way, where a plain loop over 16x16 blocks took 0.084 to
// channels-last and 0.176 back. For 32 channels at 32x32, oneDNN 2.6's reorder (jit:uni) took
// 24-30 us in efficientnet_b0_64's run (ONEDNN_VERBOSE); this takes 5.2 to channels-last and 8.4
// back, one thread, in cache (docs/PERFORMANCE.md). Each element is copied by one thread.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

// Whether reorder_channels takes `channels`: a multiple of 8, on a CPU with AVX2 and FMA (what its
// library is compiled with).
bool reorder_channels_takes(int64_t channels);

// `to` = `from` [batches, channels, positions] laid out as [batches, positions, channels]
// (to_last), or the reverse; `channels` such that reorder_channels_takes. No overlap.
void reorder_channels(const float* from, int64_t batches, int64_t channels, int64_t positions, bool to_last, float* to);

namespace avx2 {
// Items [begin, end) of batches * (channels / 8), item i = image i / (channels / 8), channels
// [8 (i % (channels / 8)), + 8), built with AVX2 (channels_last_reorder_avx2.cc).
void reorder_channel_blocks(const float* from, int64_t channels, int64_t positions, bool to_last, int64_t begin,
                            int64_t end, float* to);
}  // namespace avx2

}  // namespace nrt::exec::cpu
