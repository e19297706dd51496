// The NCHW <-> channels-last reorder (executor/kernels/cpu/channels_last_reorder.h) against an
// index-by-index copy: positions that are not whole blocks of 8 (the scalar tail), several
// images, both directions, the same result at 1 and 3 threads (the largest case split between
// them), and what it takes.
#include <gtest/gtest.h>

#include <vector>

#include "executor/kernels/cpu/channels_last_reorder.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {
namespace {

TEST(ChannelsLastReorder, MovesEveryElementToItsPlaceAndBack) {
  if (!reorder_channels_takes(8)) GTEST_SKIP() << "no AVX2 on this CPU";
  struct Case {
    int64_t batches, channels, positions;
  };
  for (const Case& c : {Case{1, 8, 8}, Case{2, 16, 13}, Case{3, 24, 1}, Case{1, 32, 1024}, Case{2, 40, 67},
                      Case{2, 64, 1024}}) {
    for (const int threads : {1, 3}) {
      set_intra_op_threads(threads);
      const int64_t count = c.batches * c.channels * c.positions;
      std::vector<float> nchw(static_cast<size_t>(count)), last(nchw.size(), -1.0f), back(nchw.size(), -1.0f);
      for (int64_t i = 0; i < count; ++i) nchw[static_cast<size_t>(i)] = static_cast<float>(i);
      reorder_channels(nchw.data(), c.batches, c.channels, c.positions, true, last.data());
      for (int64_t n = 0; n < c.batches; ++n) {
        for (int64_t ch = 0; ch < c.channels; ++ch) {
          for (int64_t p = 0; p < c.positions; ++p) {
            const int64_t image = n * c.channels * c.positions;
            ASSERT_EQ(last[static_cast<size_t>(image + p * c.channels + ch)],
                      nchw[static_cast<size_t>(image + ch * c.positions + p)])
                << c.batches << "x" << c.channels << "x" << c.positions << " at " << n << "," << ch << "," << p;
          }
        }
      }
      reorder_channels(last.data(), c.batches, c.channels, c.positions, false, back.data());
      EXPECT_EQ(back, nchw) << c.batches << "x" << c.channels << "x" << c.positions << ", " << threads << " threads";
    }
  }
  set_intra_op_threads(0);
}

TEST(ChannelsLastReorder, TakesWholeBlocksOfEightChannels) {
  if (!reorder_channels_takes(8)) GTEST_SKIP() << "no AVX2 on this CPU";
  EXPECT_TRUE(reorder_channels_takes(1152));
  EXPECT_FALSE(reorder_channels_takes(12));
  EXPECT_FALSE(reorder_channels_takes(0));
  EXPECT_FALSE(reorder_channels_takes(3));
}

}  // namespace
}  // namespace nrt::exec::cpu
