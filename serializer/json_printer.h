// A schema-driven JSON printer for verified FlatBuffers, walking the binary schema (reflection).
// FlatBuffers 2.0.8's own printer (GenerateText) writes doubles in fixed notation with 12
// decimals, which loses values such as 0.7071067811865476 or 5e-324; this printer writes every
// double in its shortest exact form, every field present in the buffer (and only those), enums
// by name, unknown enum values as numbers. FlatBuffers' own parser reads the output back.
// Non-finite doubles print as `nan`, `inf`, `-inf`, which that parser accepts (NaN payloads are
// not kept).
#pragma once

#include <cstdint>
#include <string>

#include "flatbuffers/reflection_generated.h"

namespace nrt {

std::string print_json(const reflection::Schema& schema, const uint8_t* verified_buffer);

}  // namespace nrt
