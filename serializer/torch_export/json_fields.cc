#include "serializer/torch_export/json_fields.h"

#include <cmath>
#include <limits>

#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

using simdjson::dom::element_type;

const char* type_name(element_type type) {
  switch (type) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::INT64:
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a fraction";
    case element_type::STRING:
      return "a string";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      return "null";
  }
  return "something else";
}

Error wrong_type(JsonElement value, const JsonPlace& place, const char* expected) {
  return json_error(place, std::string("expected ") + expected + ", found " + type_name(value.type()));
}

}  // namespace

std::string JsonPlace::str() const {
  std::vector<const JsonPlace*> chain;
  for (const JsonPlace* p = this; p != nullptr; p = p->parent) chain.push_back(p);
  std::string out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    const JsonPlace* p = *it;
    if (p->index >= 0) {
      out += "[" + std::to_string(p->index) + "]";
    } else if (!p->key.empty()) {
      if (!out.empty()) out += ".";
      out += p->key;
    }
  }
  return out.empty() ? "document" : out;
}

void ImportWarnings::unknown_field(std::string_view structure, std::string_view field, const JsonPlace& place) {
  std::string key = std::string(structure) + "." + std::string(field);
  if (seen_.count(key)) return;
  once(key, "unknown field '" + std::string(field) + "' in " + std::string(structure) + " ignored (first seen at " +
                place.str() + ")");
}

void ImportWarnings::once(const std::string& key, std::string message) {
  if (!seen_.insert(key).second) return;
  messages_.push_back(std::move(message));
}

Error json_error(const JsonPlace& place, const std::string& what) {
  return make_error(codes::kJson, place.str() + ": " + what);
}

Error prefixed(const JsonPlace& place, const Error& error) {
  return make_error(error.code, place.str() + ": " + error.message);
}

Error missing_field(const JsonPlace& place, std::string_view structure, std::string_view field) {
  return make_error(codes::kMissingField, place.str() + ": " + std::string(structure) + " lacks required field '" +
                                              std::string(field) + "'");
}

Result<JsonObject> as_object(JsonElement value, const JsonPlace& place) {
  JsonObject object;
  if (value.get(object) != simdjson::SUCCESS) return wrong_type(value, place, "an object");
  return object;
}

Result<JsonArray> as_array(JsonElement value, const JsonPlace& place) {
  JsonArray array;
  if (value.get(array) != simdjson::SUCCESS) return wrong_type(value, place, "an array");
  return array;
}

Result<std::string_view> as_string(JsonElement value, const JsonPlace& place) {
  std::string_view s;
  if (value.get(s) != simdjson::SUCCESS) return wrong_type(value, place, "a string");
  return s;
}

Result<int64_t> as_int64(JsonElement value, const JsonPlace& place) {
  switch (value.type()) {
    case element_type::INT64: {
      int64_t v = 0;
      if (value.get(v) != simdjson::SUCCESS) return wrong_type(value, place, "a number");
      return v;
    }
    case element_type::UINT64: {
      uint64_t v = 0;
      if (value.get(v) != simdjson::SUCCESS) return wrong_type(value, place, "a number");
      return json_error(place, "integer " + std::to_string(v) + " is beyond the int64 range");
    }
    default:
      return wrong_type(value, place, "an integer");
  }
}

Result<bool> as_bool(JsonElement value, const JsonPlace& place) {
  bool b = false;
  if (value.get(b) != simdjson::SUCCESS) return wrong_type(value, place, "a boolean");
  return b;
}

Result<double> as_float(JsonElement value, const JsonPlace& place) {
  switch (value.type()) {
    case element_type::DOUBLE: {
      double d = 0;
      if (value.get(d) != simdjson::SUCCESS) return wrong_type(value, place, "a number");
      return d;
    }
    case element_type::INT64: {
      int64_t v = 0;
      if (value.get(v) != simdjson::SUCCESS) return wrong_type(value, place, "a number");
      return static_cast<double>(v);
    }
    case element_type::UINT64: {
      uint64_t v = 0;
      if (value.get(v) != simdjson::SUCCESS) return wrong_type(value, place, "a number");
      return static_cast<double>(v);
    }
    case element_type::STRING: {
      std::string_view s;
      if (value.get(s) != simdjson::SUCCESS) return wrong_type(value, place, "a number");
      if (s == "Infinity") return std::numeric_limits<double>::infinity();
      if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
      if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
      return json_error(place, "expected a number, found the string '" + std::string(s) + "'");
    }
    default:
      return wrong_type(value, place, "a number");
  }
}

Result<simdjson::dom::key_value_pair> as_union(JsonElement value, const JsonPlace& place,
                                               std::string_view union_name) {
  NRT_TRY(object, as_object(value, place));
  if (object->size() != 1) {
    return json_error(place, "a " + std::string(union_name) + " must have exactly one member, this one has " +
                                 std::to_string(object->size()));
  }
  return *object->begin();
}

Result<JsonElement> parse_json(simdjson::dom::parser& parser, JsonText text, const std::string& what) {
  JsonElement root;
  const auto error = parser.parse(text.text.data(), text.text.size(), /*realloc_if_needed=*/!text.padded).get(root);
  if (error != simdjson::SUCCESS) {
    return make_error(codes::kJson, what + " is not valid JSON: " + simdjson::error_message(error));
  }
  return root;
}

}  // namespace nrt::torch_export
