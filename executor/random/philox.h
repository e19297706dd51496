// Philox-4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11; the
// Random123 reference): a counter-based generator. Block(counter, key) is a pure function, so any
// element of a stream is computed without the ones before it: shards draw their own elements,
// threads and CUDA threads split work anywhere, and a rescheduled program changes no bit.
// One implementation for the host and CUDA: compiled by nvcc, every function is __host__ __device__
// (NRT_HOST_DEVICE, executor/kernels/cuda/host_device.h).
#pragma once

#include <cstdint>

#include "executor/kernels/cuda/host_device.h"

namespace nrt::random {

// Random123's round multipliers and Weyl key increments (the golden ratio and sqrt(3) - 1 in 32 bits).
inline constexpr uint32_t kPhiloxM0 = 0xD2511F53u;
inline constexpr uint32_t kPhiloxM1 = 0xCD9E8D57u;
inline constexpr uint32_t kPhiloxW0 = 0x9E3779B9u;
inline constexpr uint32_t kPhiloxW1 = 0xBB67AE85u;
inline constexpr int kPhiloxRounds = 10;

// A 128-bit counter as four 32-bit words, least significant first, and the block it maps to.
struct PhiloxWords {
  uint32_t w[4];
};

// The 64-bit key as the two 32-bit key words (k0 = low half).
struct PhiloxKey {
  uint32_t k0;
  uint32_t k1;
};

NRT_HOST_DEVICE PhiloxKey philox_key(uint64_t key) {
  return {static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32)};
}

NRT_HOST_DEVICE PhiloxWords philox_counter(uint64_t low, uint64_t high = 0) {
  return {{static_cast<uint32_t>(low), static_cast<uint32_t>(low >> 32), static_cast<uint32_t>(high),
           static_cast<uint32_t>(high >> 32)}};
}

// One round: two 32x32->64 products, their halves crossed with the other words and the key.
NRT_HOST_DEVICE PhiloxWords philox_round(PhiloxWords c, PhiloxKey k) {
  const uint64_t p0 = static_cast<uint64_t>(kPhiloxM0) * c.w[0];
  const uint64_t p1 = static_cast<uint64_t>(kPhiloxM1) * c.w[2];
  return {{static_cast<uint32_t>(p1 >> 32) ^ c.w[1] ^ k.k0, static_cast<uint32_t>(p1),
           static_cast<uint32_t>(p0 >> 32) ^ c.w[3] ^ k.k1, static_cast<uint32_t>(p0)}};
}

// Philox-4x32-10: ten rounds, the key bumped by the Weyl increments between rounds.
NRT_HOST_DEVICE PhiloxWords philox4x32_10(PhiloxWords counter, PhiloxKey key) {
  for (int round = 0; round < kPhiloxRounds - 1; ++round) {
    counter = philox_round(counter, key);
    key.k0 += kPhiloxW0;
    key.k1 += kPhiloxW1;
  }
  return philox_round(counter, key);
}

}  // namespace nrt::random
