// The .nrt.json form: the Program as FlatBuffers JSON, parsed by FlatBuffers' own parser and
// printed by nrt's schema-driven printer (json_printer.h), both through the embedded binary
// schema (schema/nrt_bfbs.h), so it is lossless and never drifts from schema/nrt.fbs.
//
// Weights: each Storage carries its bytes inline in `inline_data` (an array of byte values) with
// `offset` 0; `size` and `checksum` are kept. Converting back moves the bytes into the weight
// segment and recomputes offsets. The form is meant for small programs and review; large weights
// belong in .nrt.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/program_file.h"

namespace nrt {

// A program held in memory together with its storages' bytes (one vector per Program.storages).
struct ProgramWithWeights {
  fb::ProgramT program;
  std::vector<std::vector<uint8_t>> storages;
};

// Prints a verified file as .nrt.json text.
Result<std::string> program_to_json(const ProgramFile& file);

// Parses .nrt.json text. The result is not yet verified: serialize it and open it with
// ProgramFile::from_bytes (convert_program does).
Result<ProgramWithWeights> program_from_json(std::string_view text);

// Unpacks a verified file into the object API, with copies of its storages' bytes.
ProgramWithWeights unpack_program(const ProgramFile& file);

}  // namespace nrt
