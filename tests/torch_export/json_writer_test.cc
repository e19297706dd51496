// The JSON writer matches Python's json.dumps (torch's writer): separators, escapes, and floats
// in Python's repr form (expected strings below are what CPython 3.11 prints). Also checks the
// test comparator itself, since every round-trip test relies on it.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "serializer/torch_export/json_writer.h"
#include "tests/torch_export/json_compare.h"

namespace nrt::torch_export {
namespace {

std::string python_repr(double v) {
  std::string out;
  append_python_float(&out, v);
  return out;
}

TEST(JsonWriter, FloatsLikePythonRepr) {
  const std::pair<double, const char*> cases[] = {
      {0.0, "0.0"},
      {-0.0, "-0.0"},
      {1.0, "1.0"},
      {0.1, "0.1"},
      {1e-05, "1e-05"},
      {0.0001, "0.0001"},
      {123456.0, "123456.0"},
      {1e16, "1e+16"},
      {1e15, "1000000000000000.0"},
      {1.5e300, "1.5e+300"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {3.141592653589793, "3.141592653589793"},
      {2.5e-05, "2.5e-05"},
      {1.0 / 3.0, "0.3333333333333333"},
      {9007199254740992.0, "9007199254740992.0"},
      {1152921504606846976.0, "1.152921504606847e+18"},
      {-123.456, "-123.456"},
      {100.0, "100.0"},
      {1e22, "1e+22"},
      {0.00012345, "0.00012345"},
  };
  for (const auto& [value, text] : cases) EXPECT_EQ(python_repr(value), text);
}

TEST(JsonWriter, NonFiniteFloatsAreTorchStrings) {
  JsonWriter w;
  w.begin_array();
  w.float64(std::numeric_limits<double>::infinity());
  w.float64(-std::numeric_limits<double>::infinity());
  w.float64(std::nan(""));
  w.end_array();
  EXPECT_EQ(w.text(), R"(["Infinity", "-Infinity", "NaN"])");
}

TEST(JsonWriter, SeparatorsAndEscapesLikeJsonDumps) {
  JsonWriter w;
  w.begin_object();
  w.key("a");
  w.begin_array();
  w.int64(1);
  w.int64(INT64_MIN);
  w.end_array();
  w.key("b");
  w.begin_object();
  w.end_object();
  w.key("s");
  w.string("q\"\\\n\x01\xc3\xa9");
  w.key("n");
  w.null();
  w.key("t");
  w.boolean(true);
  w.end_object();
  EXPECT_EQ(w.text(), "{\"a\": [1, -9223372036854775808], \"b\": {}, \"s\": \"q\\\"\\\\\\n\\u0001\xc3\xa9\", \"n\": null, \"t\": true}");
}

TEST(JsonCompare, FindsEveryKindOfDifference) {
  using nlohmann::json;
  EXPECT_EQ(test::json_difference(json::parse(R"({"a": 1, "b": [1.5, "x"]})"), json::parse(R"({"b": [1.5, "x"], "a": 1})")), "");
  EXPECT_NE(test::json_difference(json::parse(R"({"a": 1})"), json::parse(R"({"a": 1.0})")), "");
  EXPECT_NE(test::json_difference(json::parse(R"({"a": 0.0})"), json::parse(R"({"a": -0.0})")), "");
  EXPECT_NE(test::json_difference(json::parse(R"({"a": null})"), json::parse(R"({})")), "");
  EXPECT_NE(test::json_difference(json::parse(R"({})"), json::parse(R"({"a": null})")), "");
  EXPECT_NE(test::json_difference(json::parse(R"([1, 2])"), json::parse(R"([2, 1])")), "");
  EXPECT_EQ(test::json_difference(json::parse(R"({"a": [{"b": 2}]})"), json::parse(R"({"a": [{"b": 3}]})")), "$.a[0].b: 2 != 3");
}

}  // namespace
}  // namespace nrt::torch_export
