// .nrt.json weights are taken out of the text before FlatBuffers parses it: only the
// "inline_data" of the objects in the top-level "storages" array, each to its storage's index.
#include <gtest/gtest.h>

#include "serializer/inline_data_text.h"

namespace nrt {
namespace {

TEST(InlineDataText, TakesEachStoragesBytesAndLeavesAnEmptyArray) {
  const std::string json = R"({"storages": [ {"size": 0}, {"size": 3, "inline_data": [ 1 ,2,
      255 ]}, {"inline_data":[]} ], "metadata": [{"key": "k", "value": "\"inline_data\": [7]"}]})";
  auto out = extract_inline_data(json);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  ASSERT_EQ(out->storages.size(), 2u);
  EXPECT_EQ(out->storages.at(1), (std::vector<uint8_t>{1, 2, 255}));
  EXPECT_TRUE(out->storages.at(2).empty());
  EXPECT_EQ(out->text, R"({"storages": [ {"size": 0}, {"size": 3, "inline_data": []}, {"inline_data":[]} ], "metadata": [{"key": "k", "value": "\"inline_data\": [7]"}]})");
}

TEST(InlineDataText, LeavesArraysElsewhereToTheParser) {
  // Not in the top-level storages array: a nested "storages" key, or inline_data one level down.
  const std::string json =
      R"({"graphs": [{"storages": [{"inline_data": [1]}]}], "storages": [{"x": {"inline_data": [2]}}]})";
  auto out = extract_inline_data(json);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(out->storages.empty());
  EXPECT_EQ(out->text, json);
}

// Comments and single-quoted strings are lexed as FlatBuffers lexes them: nothing inside them
// counts, so the scanner never sees a storage or an array the parser does not.
TEST(InlineDataText, SkipsCommentsAndSingleQuotedStrings) {
  const std::string json = R"({"storages": [ {"size": 1, "inline_data": [5] /* ,"inline_data": [6] {} */ },
      // {"inline_data": [7]},
      {"key": 'x"storages": [{"inline_data": [9]}]', "inline_data": [8]} ]})";
  auto out = extract_inline_data(json);
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  ASSERT_EQ(out->storages.size(), 2u);
  EXPECT_EQ(out->storages.at(0), std::vector<uint8_t>{5});
  EXPECT_EQ(out->storages.at(1), std::vector<uint8_t>{8});
  EXPECT_NE(out->text.find(R"('x"storages": [{"inline_data": [9]}]')"), std::string::npos) << out->text;
  EXPECT_NE(out->text.find("/* ,\"inline_data\": [6] {} */"), std::string::npos) << out->text;
}

TEST(InlineDataText, RefusesAStoragesBytesGivenTwice) {
  auto out = extract_inline_data(R"({"storages": [{"inline_data": [1], "inline_data": [2]}]})");
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.error().message.find("given twice"), std::string::npos) << out.error().message;
}

TEST(InlineDataText, RefusesWhatIsNotAByte) {
  for (const char* bad : {R"({"storages": [{"inline_data": [256]}]})", R"({"storages": [{"inline_data": [-1]}]})",
                          R"({"storages": [{"inline_data": [1.5]}]})", R"({"storages": [{"inline_data": [1,]}]})",
                          R"({"storages": [{"inline_data": ["1"]}]})", R"({"storages": [{"inline_data": [1 2]}]})",
                          R"({"storages": [{"inline_data": [0001]}]})", R"({"storages": [{"inline_data": [1)"}) {
    auto out = extract_inline_data(bad);
    ASSERT_FALSE(out.ok()) << bad;
    EXPECT_EQ(out.error().code, ErrorCode::JsonParse) << bad;
    EXPECT_NE(out.error().message.find("storage 0 inline_data at byte"), std::string::npos) << out.error().message;
  }
}

}  // namespace
}  // namespace nrt
