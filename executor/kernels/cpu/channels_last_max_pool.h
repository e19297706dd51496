// One output row of a channels-last float32 max_pool2d: each output position the maximum of its
// window's rows of C channels, tap by tap in the planes loop's order (pooling_kernels.cc), NaN
// winning (the first NaN of a window stays, as nan_winning_max keeps it there): the same bits as
// that loop, whichever build computes it.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

// A 2-D window over one channels-last image: H x W positions, each `channels` floats, rows
// `in_y` and positions `in_x` floats apart; output positions `out_x` floats apart.
struct ChannelsLastPoolWindow {
  int64_t kernel[2], stride[2], pad[2], dilation[2];
  int64_t H, W, channels;
  int64_t in_y, in_x, out_x;
};

// Output row `oy` of `image`, positions [0, out_w), written from `row` on; any x86-64
// (pooling_kernels.cc).
void max_pool_row(const ChannelsLastPoolWindow& w, const float* image, int64_t oy, int64_t out_w, float* row);

namespace avx512 {
// The same row with AVX-512 F, called only where cpu_has_avx512f() holds
// (channels_last_max_pool_avx512.cc).
void max_pool_row(const ChannelsLastPoolWindow& w, const float* image, int64_t oy, int64_t out_w, float* row);
}  // namespace avx512

}  // namespace nrt::exec::cpu
