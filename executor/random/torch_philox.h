// torch's stateless Philox draws (torch.func._random; aten::_philox_*), bit for bit. The layout,
// found in torch's source and checked against torch 2.15's outputs, is written down in
// docs/RANDOM.md. In short: a key is two uint64 (seed, offset); the Philox key is the seed and
// block b of the key's stream has the counter (offset + b) mod 2^64 in its low half, 0 in its
// high half. Element g of a draw takes its bits from block g / n, lanes of g % n, where n is 4
// for 32-bit samples (float, half, bfloat16, integers up to 4 bytes) and 2 for 64-bit ones
// (double, 8-byte integers). So an element's value depends on its index alone: any range of
// elements [first, first + count) can be drawn on its own (a shard, a thread's part) and equals
// that range of the whole draw.
#pragma once

#include <cstdint>

#include "core/scalar_type.h"

namespace nrt::random {

struct TorchPhiloxKey {
  uint64_t seed = 0;
  uint64_t offset = 0;
  bool operator==(const TorchPhiloxKey&) const = default;
};

// _philox_key_split's key `index` of a split (index < num_splits): block `index` of the key's
// stream, its words 0-1 the new seed and 2-3 the new offset.
TorchPhiloxKey torch_key_split(TorchPhiloxKey key, uint64_t index);
// _philox_key_fold_in: the same block for index `data` (any uint64), so fold_in(k, i) equals
// split(k, n)[i] for every i < n.
TorchPhiloxKey torch_key_fold_in(TorchPhiloxKey key, uint64_t data);

// Whether each dtype can be drawn by each distribution.
bool torch_draws_floating(ScalarType dtype);  // uniform, normal: float32/64, float16, bfloat16
bool torch_draws_integer(ScalarType dtype);   // randint: signed and unsigned integers of 1 to 8 bytes

// Elements [first, first + count) of a key's draw, written contiguously to `out` (elements of
// `dtype`). The dtype must be one the distribution draws.
void torch_uniform(TorchPhiloxKey key, ScalarType dtype, double low, double high, int64_t first, int64_t count,
                   void* out);
void torch_normal(TorchPhiloxKey key, ScalarType dtype, double mean, double std, int64_t first, int64_t count,
                  void* out);

// randint's range in the sampled width (32 bits for dtypes up to 4 bytes, 64 for 8 bytes): every
// bit pattern when `full`, else low + sample % range (wrapping), stored as the dtype's low bits.
struct TorchIntRange {
  bool full = true;
  uint64_t low = 0;
  uint64_t range = 0;
};
void torch_randint(TorchPhiloxKey key, ScalarType dtype, TorchIntRange range, int64_t first, int64_t count, void* out);

}  // namespace nrt::random
