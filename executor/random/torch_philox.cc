#include "executor/random/torch_philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "executor/random/philox.h"
#include "executor/random/philox_blocks.h"
#include "executor/runtime/reduced_float.h"

namespace nrt::random {
namespace {

using exec::float_to_bfloat16;
using exec::float_to_half;

TorchPhiloxKey key_from_block(const PhiloxWords& block) {
  return {static_cast<uint64_t>(block.w[0]) | (static_cast<uint64_t>(block.w[1]) << 32),
          static_cast<uint64_t>(block.w[2]) | (static_cast<uint64_t>(block.w[3]) << 32)};
}

// Blocks per step: 4 KiB of words on the stack.
constexpr int64_t kChunkBlocks = 256;

// Elements [first, first + count) of a stream of `per_block` elements per block: calls
// emit(words, local, n, done) per chunk of blocks, where `words` holds the chunk's blocks, the
// chunk's elements local .. local + n - 1 (counted from its first block) are wanted, and `done`
// elements were emitted before.
template <int per_block, class Emit>
void for_each_chunk(TorchPhiloxKey key, int64_t first, int64_t count, Emit&& emit) {
  alignas(32) uint32_t words[4 * kChunkBlocks];
  const int64_t end = first + count;
  for (int64_t g = first; g < end;) {
    const int64_t block = g / per_block;
    const int64_t last_block = std::min((end - 1) / per_block, block + kChunkBlocks - 1);
    philox_blocks(key.seed, key.offset + static_cast<uint64_t>(block), last_block - block + 1, words);
    const int64_t chunk_end = std::min(end, (last_block + 1) * per_block);
    emit(static_cast<const uint32_t*>(words), g - block * per_block, chunk_end - g, g - first);
    g = chunk_end;
  }
}

uint64_t sample64(const uint32_t* words, int64_t i) {
  return (static_cast<uint64_t>(words[2 * i]) << 32) | words[2 * i + 1];
}

// uniform for 32-bit samples: the low `digits` bits (the dtype's mantissa with its implicit bit)
// as a fraction in [0, 1), scaled in float; `store` converts each float to the dtype.
template <int digits, class Store>
void uniform32(TorchPhiloxKey key, float from, float to, int64_t first, int64_t count, Store&& store) {
  constexpr uint32_t mask = (uint32_t{1} << digits) - 1;
  constexpr float divisor = 1.0f / static_cast<float>(uint32_t{1} << digits);
  const float range = to - from;
  for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
    for (int64_t j = 0; j < n; ++j) {
      const float x = static_cast<float>(static_cast<int32_t>(words[local + j] & mask)) * divisor;
      store(done + j, x * range + from);
    }
  });
}

// curand's Box-Muller, as torch computes it on every device: a pair of uniforms in (0, 1]
// gives a radius and an angle, the pair's first element takes the cosine, the second the sine.
template <class Store>
void normal_float(TorchPhiloxKey key, float mean, float std, int64_t first, int64_t count, Store&& store) {
  constexpr float m = 2.3283064365386963e-10f;  // 2^-32
  constexpr float two_pi = 6.2831853071795864f;
  for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
    for (int64_t j = 0; j < n; ++j) {
      const int64_t even = (local + j) & ~int64_t{1};
      const float u0 = std::fma(static_cast<float>(words[even]), m, m * 0.5f);
      const float u1 = std::fma(static_cast<float>(words[even + 1]), m, m * 0.5f);
      const float radius = std::sqrt(-2.0f * std::log(u0));
      const float angle = two_pi * u1;
      const float z = ((local + j) & 1) == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
      store(done + j, z * std + mean);
    }
  });
}

void normal_double(TorchPhiloxKey key, double mean, double std, int64_t first, int64_t count, double* out) {
  constexpr double m = 2.3283064365386963e-10;  // 2^-32
  constexpr double m2 = m * m;
  constexpr double two_pi = 6.2831853071795864;
  for_each_chunk<2>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
    for (int64_t j = 0; j < n; ++j) {
      const uint32_t* w = words + 4 * ((local + j) / 2);
      const double u0 = std::fma(static_cast<double>(w[0]), m, static_cast<double>(w[1]) * m2 + m2 * 0.5);
      const double u1 = std::fma(static_cast<double>(w[2]), m, static_cast<double>(w[3]) * m2 + m2 * 0.5);
      const double radius = std::sqrt(-2.0 * std::log(u0));
      const double angle = two_pi * u1;
      const double z = ((local + j) & 1) == 0 ? radius * std::cos(angle) : radius * std::sin(angle);
      out[done + j] = z * std + mean;
    }
  });
}

template <class T>
void randint_words(TorchPhiloxKey key, TorchIntRange range, int64_t first, int64_t count, void* out_bytes) {
  T* out = static_cast<T*>(out_bytes);
  if constexpr (sizeof(T) == 8) {
    for_each_chunk<2>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
      for (int64_t j = 0; j < n; ++j) {
        const uint64_t s = sample64(words, local + j);
        out[done + j] = static_cast<T>(range.full ? s : range.low + s % range.range);
      }
    });
  } else {
    const auto low = static_cast<uint32_t>(range.low);
    const auto span = static_cast<uint32_t>(range.range);
    for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
      for (int64_t j = 0; j < n; ++j) {
        const uint32_t s = words[local + j];
        out[done + j] = static_cast<T>(range.full ? s : static_cast<uint32_t>(low + s % span));
      }
    });
  }
}

}  // namespace

TorchPhiloxKey torch_key_split(TorchPhiloxKey key, uint64_t index) {
  return key_from_block(philox4x32_10(philox_counter(key.offset + index), philox_key(key.seed)));
}

TorchPhiloxKey torch_key_fold_in(TorchPhiloxKey key, uint64_t data) { return torch_key_split(key, data); }

bool torch_draws_floating(ScalarType dtype) {
  return dtype == ScalarType::FLOAT32 || dtype == ScalarType::FLOAT64 || dtype == ScalarType::FLOAT16 ||
         dtype == ScalarType::BFLOAT16;
}

bool torch_draws_integer(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::UINT8: case ScalarType::INT8: case ScalarType::UINT16: case ScalarType::INT16:
    case ScalarType::UINT32: case ScalarType::INT32: case ScalarType::UINT64: case ScalarType::INT64:
      return true;
    default:
      return false;
  }
}

void torch_uniform(TorchPhiloxKey key, ScalarType dtype, double low, double high, int64_t first, int64_t count,
                   void* out) {
  switch (dtype) {
    case ScalarType::FLOAT32: {
      auto* o = static_cast<float*>(out);
      uniform32<24>(key, static_cast<float>(low), static_cast<float>(high), first, count,
                    [o](int64_t i, float v) { o[i] = v; });
      return;
    }
    case ScalarType::FLOAT16: {
      // The bounds are rounded to half first, as torch holds them in the output dtype.
      auto* o = static_cast<uint16_t*>(out);
      const float from = exec::half_to_float(float_to_half(static_cast<float>(low)));
      const float to = exec::half_to_float(float_to_half(static_cast<float>(high)));
      uniform32<11>(key, from, to, first, count, [o](int64_t i, float v) { o[i] = float_to_half(v); });
      return;
    }
    case ScalarType::BFLOAT16: {
      auto* o = static_cast<uint16_t*>(out);
      const float from = exec::bfloat16_to_float(float_to_bfloat16(static_cast<float>(low)));
      const float to = exec::bfloat16_to_float(float_to_bfloat16(static_cast<float>(high)));
      uniform32<8>(key, from, to, first, count, [o](int64_t i, float v) { o[i] = float_to_bfloat16(v); });
      return;
    }
    case ScalarType::FLOAT64: {
      auto* o = static_cast<double*>(out);
      const double range = high - low;
      for_each_chunk<2>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
        for (int64_t j = 0; j < n; ++j) {
          const double x = static_cast<double>(sample64(words, local + j) & ((uint64_t{1} << 53) - 1)) * 0x1p-53;
          o[done + j] = x * range + low;
        }
      });
      return;
    }
    default:
      return;
  }
}

void torch_normal(TorchPhiloxKey key, ScalarType dtype, double mean, double std, int64_t first, int64_t count,
                  void* out) {
  const auto fmean = static_cast<float>(mean);
  const auto fstd = static_cast<float>(std);
  switch (dtype) {
    case ScalarType::FLOAT32: {
      auto* o = static_cast<float*>(out);
      normal_float(key, fmean, fstd, first, count, [o](int64_t i, float v) { o[i] = v; });
      return;
    }
    case ScalarType::FLOAT16: {
      auto* o = static_cast<uint16_t*>(out);
      normal_float(key, fmean, fstd, first, count, [o](int64_t i, float v) { o[i] = float_to_half(v); });
      return;
    }
    case ScalarType::BFLOAT16: {
      auto* o = static_cast<uint16_t*>(out);
      normal_float(key, fmean, fstd, first, count, [o](int64_t i, float v) { o[i] = float_to_bfloat16(v); });
      return;
    }
    case ScalarType::FLOAT64:
      normal_double(key, mean, std, first, count, static_cast<double*>(out));
      return;
    default:
      return;
  }
}

void torch_randint(TorchPhiloxKey key, ScalarType dtype, TorchIntRange range, int64_t first, int64_t count, void* out) {
  switch (element_size(dtype)) {
    case 1: return randint_words<uint8_t>(key, range, first, count, out);
    case 2: return randint_words<uint16_t>(key, range, first, count, out);
    case 4: return randint_words<uint32_t>(key, range, first, count, out);
    case 8: return randint_words<uint64_t>(key, range, first, count, out);
    default: return;
  }
}

}  // namespace nrt::random
