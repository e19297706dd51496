// The weights of a .nrt.json program are byte arrays ("inline_data": [12, 255, ...] in each
// storage). FlatBuffers' JSON parser keeps a field record of over 100 bytes per array element
// while it parses, so a file's weights would cost ~140 bytes of memory per byte. They are taken
// out of the text first, straight into bytes, leaving `[]` for the parser; memory then stays
// proportional to the file's size.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nrt {

struct InlineDataExtraction {
  std::string text;                                    // the JSON with each array emptied
  std::map<uint32_t, std::vector<uint8_t>> storages;  // storage index -> its inline_data bytes
};

// Finds "inline_data" of the objects in the top-level "storages" array. An element that is not
// a decimal integer 0..255 is a JsonParse error naming its byte offset. Malformed JSON elsewhere
// is left for the parser to report.
Result<InlineDataExtraction> extract_inline_data(std::string_view json);

}  // namespace nrt
