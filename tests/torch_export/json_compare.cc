#include "tests/torch_export/json_compare.h"

#include <cmath>
#include <cstring>

namespace nrt::test {
namespace {

bool is_integer(const nlohmann::json& j) { return j.is_number_integer() || j.is_number_unsigned(); }

}  // namespace

std::string json_difference(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path) {
  if (is_integer(expected) && is_integer(actual)) {
    return expected == actual ? "" : path + ": " + expected.dump() + " != " + actual.dump();
  }
  if (expected.type() != actual.type()) {
    return path + ": type " + expected.type_name() + " != " + actual.type_name() + " (" + expected.dump().substr(0, 80) +
           " vs " + actual.dump().substr(0, 80) + ")";
  }
  if (expected.is_number_float()) {
    const double a = expected.get<double>(), b = actual.get<double>();
    if (std::isnan(a) && std::isnan(b)) return "";
    return std::memcmp(&a, &b, sizeof a) == 0 ? "" : path + ": " + expected.dump() + " != " + actual.dump();
  }
  if (expected.is_object()) {
    for (auto it = expected.begin(); it != expected.end(); ++it) {
      if (!actual.contains(it.key())) return path + "." + it.key() + ": missing";
      if (auto d = json_difference(it.value(), actual.at(it.key()), path + "." + it.key()); !d.empty()) return d;
    }
    for (auto it = actual.begin(); it != actual.end(); ++it) {
      if (!expected.contains(it.key())) return path + "." + it.key() + ": unexpected";
    }
    return "";
  }
  if (expected.is_array()) {
    if (expected.size() != actual.size()) {
      return path + ": " + std::to_string(expected.size()) + " items != " + std::to_string(actual.size());
    }
    for (size_t i = 0; i < expected.size(); ++i) {
      if (auto d = json_difference(expected[i], actual[i], path + "[" + std::to_string(i) + "]"); !d.empty()) return d;
    }
    return "";
  }
  return expected == actual ? "" : path + ": " + expected.dump().substr(0, 120) + " != " + actual.dump().substr(0, 120);
}

}  // namespace nrt::test
