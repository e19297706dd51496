// Facts about nrt's element types: byte size and short display name ("f32", "bf16", ...).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "schema/nrt_generated.h"

namespace nrt {

// Bytes per element; 0 for UNKNOWN and for values this version does not know.
std::size_t element_size(fb::ScalarType type);

// Short name used by `nrt-inspect print`/`info`: f32, f16, bf16, i64, u8, b8, c64, f8e4m3fn, ...
std::string_view short_name(fb::ScalarType type);

// Parses a short name back; nullopt when unknown.
std::optional<fb::ScalarType> scalar_type_from_short_name(std::string_view name);

// True when `type` is a member of fb::ScalarType (the FlatBuffers verifier does not check enums).
bool is_known(fb::ScalarType type);

}  // namespace nrt
