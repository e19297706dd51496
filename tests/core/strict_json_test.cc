// core/strict_json.h: a key named twice in one object, or nesting past the bound, is an error
// naming it; the same key in different objects, and ordinary documents, parse.
#include "core/strict_json.h"

#include <gtest/gtest.h>

#include <string>

namespace nrt {
namespace {

std::string error_of(std::string_view text, size_t depth = kStrictJsonMaxDepth) {
  auto parsed = parse_strict_json(text, depth);
  if (parsed) return "";
  EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument);
  return parsed.error().message;
}

TEST(StrictJson, ParsesOrdinaryDocuments) {
  auto parsed = parse_strict_json(R"({"a": {"x": 1}, "b": {"x": [1, {"x": 2}]}, "c": "x"})");
  ASSERT_TRUE(parsed) << parsed.error().message;
  EXPECT_EQ((*parsed)["b"]["x"][1]["x"], 2);
}

TEST(StrictJson, AKeyNamedTwiceIsNamedWithItsObject) {
  EXPECT_EQ(error_of(R"({"mesh": 1, "mesh": 2})"), "key \"mesh\" appears twice in the top level");
  EXPECT_EQ(error_of(R"({"mesh": {"shape": [2], "shape": [4]}})"), "key \"shape\" appears twice in mesh");
  EXPECT_EQ(error_of(R"({"entries": [{"a": 1}, {"a": 1, "a": 2}]})"), "key \"a\" appears twice in entries[]");
}

TEST(StrictJson, NestingPastTheBoundIsRefused) {
  const std::string deep = std::string(100, '[') + std::string(100, ']');
  EXPECT_EQ(error_of(deep), "nested deeper than 64 levels");
  EXPECT_EQ(error_of("[[[1]]]", 3), "");
  EXPECT_EQ(error_of("[[[[1]]]]", 3), "nested deeper than 3 levels");
}

TEST(StrictJson, MalformedTextSaysSo) {
  EXPECT_EQ(error_of(R"({"a": )").rfind("not JSON: ", 0), 0u);
  EXPECT_EQ(error_of("").rfind("not JSON: ", 0), 0u);
}

}  // namespace
}  // namespace nrt
