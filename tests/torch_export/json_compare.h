// JSON value equality for the round-trip tests: objects compare by key (order aside), arrays
// element by element, numbers by type (an integer is not a float) and value, floats bit for bit
// (NaN equals NaN). Returns "" when equal, else the path of the first difference and why.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace nrt::test {

std::string json_difference(const nlohmann::json& expected, const nlohmann::json& actual, const std::string& path = "$");

}  // namespace nrt::test
