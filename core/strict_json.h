// JSON that users hand nrt (shard plans, flight-recorder dumps), parsed strictly: an object that
// names a key twice is an error naming the key and where it is (nlohmann, like most parsers,
// keeps the last value in silence, so a repeated "mesh" or a pasted-over entry changes a plan
// without a word), and so is nesting deeper than a bound (no document of these formats nests
// past a handful of levels; a deeper one is hostile).
#pragma once

#include <nlohmann/json.hpp>

#include <string_view>

#include "core/error.h"

namespace nrt {

inline constexpr size_t kStrictJsonMaxDepth = 64;

// InvalidArgument on malformed JSON ("not JSON: ..."), a repeated key ("key \"shape\" appears
// twice in mesh") or nesting past `max_depth`.
Result<nlohmann::json> parse_strict_json(std::string_view text, size_t max_depth = kStrictJsonMaxDepth);

}  // namespace nrt
