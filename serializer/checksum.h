// XXH3-128 of a storage's bytes, as stored in Storage.checksum.
#pragma once

#include <cstdint>
#include <span>

#include "schema/nrt_generated.h"

namespace nrt {

fb::Checksum128 checksum_of(std::span<const uint8_t> bytes);

}  // namespace nrt
