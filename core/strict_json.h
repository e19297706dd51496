// JSON that users hand nrt (shard plans, flight-recorder dumps), parsed strictly: an object that
// names a key twice is an error naming the key and where it is (nlohmann, like most parsers,
// keeps the last value in silence, so a repeated "mesh" or a pasted-over entry changes a plan
// without a word), and so is nesting deeper than a bound (no document of these formats nests
// past a handful of levels; a deeper one is hostile).
#pragma once

#include <nlohmann/json.hpp>

#include <functional>
#include <string_view>

#include "core/error.h"

namespace nrt {

inline constexpr size_t kStrictJsonMaxDepth = 64;

// InvalidArgument on malformed JSON ("not JSON: ..."), a repeated key ("key \"shape\" appears
// twice in mesh") or nesting past `max_depth`.
Result<nlohmann::json> parse_strict_json(std::string_view text, size_t max_depth = kStrictJsonMaxDepth);

// The same, handing `take` each value as it is completed (nlohmann's parser callback: `depth` 0 is
// the top level). A value `take` returns false for is left out of the document: a reader of a
// long list converts each element and drops it, so the document never holds the list.
using JsonTake = std::function<bool(int depth, nlohmann::json::parse_event_t event, nlohmann::json& value)>;
Result<nlohmann::json> parse_strict_json(std::string_view text, const JsonTake& take,
                                         size_t max_depth = kStrictJsonMaxDepth);

}  // namespace nrt
