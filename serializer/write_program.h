// Writes a program and its storages' bytes as an .nrt container (container.h). The writer owns
// the layout: it stamps the schema version, assigns every storage an aligned offset in the weight
// segment, and records its size and XXH3-128 checksum; the caller only supplies the bytes, one
// span per Program.storages entry, in order. Storage inline_data (the .nrt.json form) must be
// moved out by the caller first.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt {

using StorageSpans = std::span<const std::span<const uint8_t>>;

// The whole file in memory (small programs, tests, JSON conversion before its verification).
Result<std::vector<uint8_t>> serialize_program(fb::ProgramT program, StorageSpans storages);

// Streams the file to `path` atomically (weights are not copied into one buffer first).
Status write_program_file(const std::string& path, fb::ProgramT program, StorageSpans storages);

}  // namespace nrt
