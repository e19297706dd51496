#include "executor/random/torch_philox.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <immintrin.h>

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

// Draws of this many bytes or more bypass the cache (non-temporal stores): they are larger than
// the caches, and a normal store first reads each line it writes (twice the memory traffic).
constexpr int64_t kStreamBytes = int64_t{8} << 20;

// Copies n floats to `out` with non-temporal stores where `out` is 16-byte aligned.
void stream_out(const float* values, int64_t n, float* out) {
  int64_t j = 0;
  for (; j < n && (reinterpret_cast<uintptr_t>(out + j) & 15) != 0; ++j) out[j] = values[j];
  for (; j + 4 <= n; j += 4) _mm_stream_ps(out + j, _mm_loadu_ps(values + j));
  for (; j < n; ++j) out[j] = values[j];
}

uint64_t sample64(const uint32_t* words, int64_t i) {
  return (static_cast<uint64_t>(words[2 * i]) << 32) | words[2 * i + 1];
}

// uniform for 32-bit samples: the low `digits` bits (the dtype's mantissa with its implicit bit)
// as a fraction in [0, 1), scaled in float. Plain pointers and one loop per chunk, so the
// compiler vectorises it.
template <int digits>
void uniform_floats(const uint32_t* __restrict words, int64_t n, float from, float range, float* __restrict out) {
  constexpr uint32_t mask = (uint32_t{1} << digits) - 1;
  constexpr float divisor = 1.0f / static_cast<float>(uint32_t{1} << digits);
  for (int64_t j = 0; j < n; ++j) {
    const float x = static_cast<float>(static_cast<int32_t>(words[j] & mask)) * divisor;
    out[j] = x * range + from;
  }
}

// The same for half and bfloat16: floats of one chunk, then converted.
template <int digits, class Convert>
void uniform_reduced(TorchPhiloxKey key, float from, float to, int64_t first, int64_t count, uint16_t* out,
                     Convert&& convert) {
  float values[4 * kChunkBlocks];
  for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
    uniform_floats<digits>(words + local, n, from, to - from, values);
    for (int64_t j = 0; j < n; ++j) out[done + j] = convert(values[j]);
  });
}

// Box-Muller pairs: elements 2p and 2p + 1 of a stream come from one pair of uniforms, the first
// taking the cosine and the second the sine. emit_pairs calls pair(p) -> {z0, z1} once per pair
// that overlaps [local, local + n) and stores the wanted ones (a range may start or end inside a pair).
template <class Pair, class Store>
void emit_pairs(int64_t local, int64_t n, int64_t done, Pair&& pair, Store&& store) {
  const int64_t end = local + n;
  for (int64_t e = local & ~int64_t{1}; e < end; e += 2) {
    const auto [z0, z1] = pair(e / 2);
    if (e >= local) store(done + (e - local), z0);
    if (e + 1 < end) store(done + (e + 1 - local), z1);
  }
}

template <class T>
struct Normals {
  T z0;
  T z1;
};

// curand's Box-Muller, as torch computes it on every device: a uniform in (0, 1] for the radius,
// one for the angle. Float: one word each, pair p from words 2p and 2p + 1 (four elements a block).
template <class Store>
void normal_float(TorchPhiloxKey key, float mean, float std, int64_t first, int64_t count, Store&& store) {
  constexpr float m = 2.3283064365386963e-10f;  // 2^-32
  constexpr float two_pi = 6.2831853071795864f;
  for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
    auto pair = [&](int64_t p) {
      const float u0 = std::fma(static_cast<float>(words[2 * p]), m, m * 0.5f);
      const float u1 = std::fma(static_cast<float>(words[2 * p + 1]), m, m * 0.5f);
      const float radius = std::sqrt(-2.0f * std::log(u0));
      const float angle = two_pi * u1;
      return Normals<float>{radius * std::cos(angle) * std + mean, radius * std::sin(angle) * std + mean};
    };
    emit_pairs(local, n, done, pair, store);
  });
}

// Double: two words per uniform (the first the high part), so one block is one pair.
void normal_double(TorchPhiloxKey key, double mean, double std, int64_t first, int64_t count, double* out) {
  constexpr double m = 2.3283064365386963e-10;  // 2^-32
  constexpr double m2 = m * m;
  constexpr double two_pi = 6.2831853071795864;
  for_each_chunk<2>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
    auto pair = [&](int64_t p) {
      const uint32_t* w = words + 4 * p;
      const double u0 = std::fma(static_cast<double>(w[0]), m, static_cast<double>(w[1]) * m2 + m2 * 0.5);
      const double u1 = std::fma(static_cast<double>(w[2]), m, static_cast<double>(w[3]) * m2 + m2 * 0.5);
      const double radius = std::sqrt(-2.0 * std::log(u0));
      const double angle = two_pi * u1;
      return Normals<double>{radius * std::cos(angle) * std + mean, radius * std::sin(angle) * std + mean};
    };
    emit_pairs(local, n, done, pair, [out](int64_t i, double v) { out[i] = v; });
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
      const auto from = static_cast<float>(low);
      const float range = static_cast<float>(high) - from;
      if (count * 4 < kStreamBytes) {
        for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
          uniform_floats<24>(words + local, n, from, range, o + done);
        });
        return;
      }
      alignas(16) float values[4 * kChunkBlocks];
      for_each_chunk<4>(key, first, count, [&](const uint32_t* words, int64_t local, int64_t n, int64_t done) {
        uniform_floats<24>(words + local, n, from, range, values);
        stream_out(values, n, o + done);
      });
      _mm_sfence();
      return;
    }
    case ScalarType::FLOAT16: {
      // The bounds are rounded to half first, as torch holds them in the output dtype.
      const float from = exec::half_to_float(float_to_half(static_cast<float>(low)));
      const float to = exec::half_to_float(float_to_half(static_cast<float>(high)));
      uniform_reduced<11>(key, from, to, first, count, static_cast<uint16_t*>(out), float_to_half);
      return;
    }
    case ScalarType::BFLOAT16: {
      const float from = exec::bfloat16_to_float(float_to_bfloat16(static_cast<float>(low)));
      const float to = exec::bfloat16_to_float(float_to_bfloat16(static_cast<float>(high)));
      uniform_reduced<8>(key, from, to, first, count, static_cast<uint16_t*>(out), float_to_bfloat16);
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
