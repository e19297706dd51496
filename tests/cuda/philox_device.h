// Philox blocks computed on a CUDA device with executor/random/philox.h (philox_device.cu), for
// tests/cuda/philox_device_test: the device's words must be the host's.
#pragma once

#include <cstdint>
#include <string>

namespace nrt::testing {

// Blocks for counters first, first + 1, ... (mod 2^64) into `words` (4 per block, host memory);
// an empty string on success, else the CUDA error.
std::string philox_blocks_on_device(uint64_t key, uint64_t first_counter, int64_t count, uint32_t* words);

}  // namespace nrt::testing
