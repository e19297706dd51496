// Philox-4x32-10 on a CUDA device (executor/random/philox.h compiled by nvcc) gives the host's
// words: Random123's first known answer and 10^5 consecutive blocks across the counter's wrap.
// Tagged gpu: compiled wherever CUDA is, run on a GPU machine (scripts/gpu_check.sh).
#include <gtest/gtest.h>

#include <vector>

#include "executor/random/philox_blocks.h"
#include "tests/cuda/philox_device.h"

namespace nrt::testing {
namespace {

TEST(PhiloxDeviceTest, DeviceBlocksAreTheHostBlocks) {
  const int64_t count = 100000;
  const uint64_t first = ~uint64_t{0} - 500;
  std::vector<uint32_t> device(4 * count), host(4 * count);
  const std::string error = philox_blocks_on_device(0x0123456789abcdefull, first, count, device.data());
  ASSERT_TRUE(error.empty()) << error;
  random::detail::philox_blocks_scalar(0x0123456789abcdefull, first, count, host.data());
  EXPECT_EQ(device, host);

  std::vector<uint32_t> zero(4);
  ASSERT_TRUE(philox_blocks_on_device(0, 0, 1, zero.data()).empty());
  EXPECT_EQ(zero, (std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
}

}  // namespace
}  // namespace nrt::testing
