// The weights digest: every weight tensor in fqn order with its view (dtype, sizes, strides,
// offset) and the canonical number of the storage behind it (storages numbered by first use, so
// sharing is part of the digest while storage order, offsets and alignment in the file are not),
// then every storage's content digest. Storages are split into fixed 16 MiB chunks hashed on
// several threads; a storage's digest is the digest of its size and chunk digests, so the result
// does not depend on the thread count.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "serializer/digest.h"
#include "serializer/program_file.h"

namespace nrt {

inline constexpr uint64_t kWeightHashChunkBytes = uint64_t{16} << 20;

struct WeightsDigests {
  Digest weights;
  std::vector<Digest> storages;  // by storage index in the file
};

struct WeightsHashOptions {
  HashAlgorithm algorithm = HashAlgorithm::kXxh3;
  unsigned threads = 0;  // 0: one per hardware thread
  // Called on the calling thread about every 100 ms while hashing: (bytes done, bytes total).
  std::function<void(uint64_t, uint64_t)> progress;
};

WeightsDigests hash_weights(const ProgramFile& file, const WeightsHashOptions& options);

}  // namespace nrt
