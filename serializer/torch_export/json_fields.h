// Reading torch.export JSON through simdjson's DOM: typed accessors whose errors name the place
// in the document ("graph_module.graph.nodes[3].inputs[0].arg: expected an integer, found a
// string"), and the warning list for fields this version does not know (one warning per
// structure and field name, however often it occurs). Places are built on the stack while
// descending and only printed when something fails, so the happy path costs nothing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include <simdjson.h>

#include "core/error.h"

namespace nrt::torch_export {

using JsonElement = simdjson::dom::element;
using JsonObject = simdjson::dom::object;
using JsonArray = simdjson::dom::array;

struct JsonPlace {
  const JsonPlace* parent = nullptr;
  std::string_view key;  // member name; empty for an array item or the root
  int64_t index = -1;    // array index, or -1

  JsonPlace member(std::string_view name) const { return JsonPlace{this, name, -1}; }
  JsonPlace item(size_t i) const { return JsonPlace{this, {}, static_cast<int64_t>(i)}; }
  std::string str() const;  // "graph_module.graph.nodes[3].inputs[0]"; "document" for the root
};

class ImportWarnings {
 public:
  // "unknown field 'foo' in Node ignored (first seen at graph_module.graph.nodes[0])".
  void unknown_field(std::string_view structure, std::string_view field, const JsonPlace& place);
  // Adds `message` unless a message with the same `key` was added before.
  void once(const std::string& key, std::string message);
  const std::vector<std::string>& messages() const { return messages_; }

 private:
  std::unordered_set<std::string> seen_;
  std::vector<std::string> messages_;
};

Error json_error(const JsonPlace& place, const std::string& what);
// `error` with the place prepended to its message (for errors from code that knows no places).
Error prefixed(const JsonPlace& place, const Error& error);
Error missing_field(const JsonPlace& place, std::string_view structure, std::string_view field);

Result<JsonObject> as_object(JsonElement value, const JsonPlace& place);
Result<JsonArray> as_array(JsonElement value, const JsonPlace& place);
Result<std::string_view> as_string(JsonElement value, const JsonPlace& place);
// Integers only (no fractions); values beyond int64 are an error, not a wrap.
Result<int64_t> as_int64(JsonElement value, const JsonPlace& place);
Result<bool> as_bool(JsonElement value, const JsonPlace& place);
// A number, or one of the strings "Infinity", "-Infinity", "NaN" torch.export writes.
Result<double> as_float(JsonElement value, const JsonPlace& place);
inline bool is_null(JsonElement value) { return value.type() == simdjson::dom::element_type::NULL_VALUE; }

// A torch.export union: an object with exactly one member. Returns that member.
Result<simdjson::dom::key_value_pair> as_union(JsonElement value, const JsonPlace& place, std::string_view union_name);

// JSON text to parse. `padded` says simdjson::SIMDJSON_PADDING bytes after the text are
// readable (spare capacity of a std::string, a simdjson::padded_string), which spares simdjson
// copying the whole document into a padded buffer first.
struct JsonText {
  std::string_view text;
  bool padded = false;

  JsonText(std::string_view t) : text(t) {}  // NOLINT: implicit by design
  JsonText(const std::string& s)              // NOLINT
      : text(s), padded(s.capacity() - s.size() >= simdjson::SIMDJSON_PADDING) {}
  JsonText(const simdjson::padded_string& s) : text(s.data(), s.size()), padded(true) {}  // NOLINT
};

// Parses `text` (any JSON) into `parser`'s document.
Result<JsonElement> parse_json(simdjson::dom::parser& parser, JsonText text, const std::string& what);

}  // namespace nrt::torch_export
