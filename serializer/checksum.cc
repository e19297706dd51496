#include "serializer/checksum.h"

#include <xxhash.h>

namespace nrt {

fb::Checksum128 checksum_of(std::span<const uint8_t> bytes) {
  const XXH128_hash_t h = XXH3_128bits(bytes.data(), bytes.size());
  return fb::Checksum128(h.low64, h.high64);
}

}  // namespace nrt
