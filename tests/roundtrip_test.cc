// Every corpus program survives object -> binary -> object -> .nrt.json -> binary with identical
// bytes, and the committed files in testdata/ load, verify deeply and agree with their JSON twins.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <limits>

#include "serializer/open_program.h"
#include "serializer/json_form.h"
#include "serializer/program_file.h"
#include "serializer/read_file.h"
#include "serializer/write_program.h"
#include "testdata/corpus_programs.h"

namespace nrt {
namespace {

std::vector<std::span<const uint8_t>> spans_of(const ProgramWithWeights& p) {
  std::vector<std::span<const uint8_t>> spans;
  for (const auto& s : p.storages) spans.emplace_back(s.data(), s.size());
  return spans;
}

std::vector<uint8_t> serialize(ProgramWithWeights program) {
  const auto spans = spans_of(program);
  auto bytes = serialize_program(std::move(program.program), spans);
  EXPECT_TRUE(bytes.ok()) << bytes.error().to_string();
  return bytes.ok() ? std::move(*bytes) : std::vector<uint8_t>{};
}

ProgramFile open_bytes(std::vector<uint8_t> bytes) {
  auto file = ProgramFile::from_bytes(std::move(bytes), VerifyOptions{.deep = true});
  EXPECT_TRUE(file.ok()) << file.error().to_string();
  return std::move(file).value();
}

class CorpusRoundTrip : public ::testing::TestWithParam<testdata::CorpusProgram> {};

TEST_P(CorpusRoundTrip, BinaryObjectJsonBinaryIsIdentical) {
  const auto first = serialize(GetParam().build());
  ASSERT_FALSE(first.empty());
  ProgramFile file = open_bytes(first);

  // binary -> object -> binary
  const auto second = serialize(unpack_program(file));
  EXPECT_EQ(first, second);

  // binary -> .nrt.json -> object -> binary
  auto json = program_to_json(file);
  ASSERT_TRUE(json.ok()) << json.error().to_string();
  auto parsed = program_from_json(*json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
  const auto third = serialize(std::move(*parsed));
  EXPECT_EQ(first, third);

  // Printing is deterministic: the re-read program prints the same text.
  ProgramFile again = open_bytes(third);
  auto json_again = program_to_json(again);
  ASSERT_TRUE(json_again.ok());
  EXPECT_EQ(*json, *json_again);
}

TEST_P(CorpusRoundTrip, CommittedFilesLoadAndMatchTheirJsonTwin) {
  const std::string base = "testdata/" + GetParam().name;
  auto committed = ProgramFile::open(base + ".nrt", VerifyOptions{.deep = true});
  ASSERT_TRUE(committed.ok()) << committed.error().to_string();
  auto from_json = open_program(base + ".nrt.json", {.format = ProgramFormat::kNrtJson});
  ASSERT_TRUE(from_json.ok()) << from_json.error().to_string();
  const auto json_bytes = from_json->file_bytes();
  const auto file_bytes = committed->file_bytes();
  EXPECT_TRUE(std::equal(file_bytes.begin(), file_bytes.end(), json_bytes.begin(), json_bytes.end()))
      << base << ".nrt and " << base << ".nrt.json disagree";

  auto text = read_file(base + ".nrt.json");
  ASSERT_TRUE(text.ok());
  auto printed = program_to_json(*committed);
  ASSERT_TRUE(printed.ok());
  EXPECT_EQ(*text, *printed) << "printing " << base << ".nrt does not give the committed .nrt.json";
}

// Files of schema 1.0 are what the generator writes today; when the schema grows, keep the old
// files and add new ones instead of regenerating (docs/FORMAT.md).
TEST_P(CorpusRoundTrip, GeneratorStillWritesTheCommittedFile) {
  auto committed = ProgramFile::open("testdata/" + GetParam().name + ".nrt");
  ASSERT_TRUE(committed.ok()) << committed.error().to_string();
  const auto fresh = serialize(GetParam().build());
  const auto bytes = committed->file_bytes();
  EXPECT_TRUE(std::equal(bytes.begin(), bytes.end(), fresh.begin(), fresh.end()))
      << "testdata/" << GetParam().name << ".nrt differs from corpus_programs.cc; run scripts/regenerate_testdata.sh";
}

INSTANTIATE_TEST_SUITE_P(Corpus, CorpusRoundTrip, ::testing::ValuesIn(testdata::corpus_programs()),
                         [](const auto& info) { return info.param.name; });

TEST(JsonForm, KeepsEveryDoubleBitExact) {
  auto program = testdata::corpus_programs()[1].build();  // all_arguments: -0.0, NaN, inf, 5e-324, max
  ProgramFile file = open_bytes(serialize(std::move(program)));
  auto json = program_to_json(file);
  ASSERT_TRUE(json.ok());
  EXPECT_NE(json->find("5e-324"), std::string::npos);
  EXPECT_NE(json->find("-0.0"), std::string::npos);
  EXPECT_NE(json->find("1.7976931348623157e+308"), std::string::npos);
}

TEST(JsonForm, RejectsInlineDataOfTheWrongSize) {
  auto program = testdata::corpus_programs()[0].build();  // mlp, with weights
  ProgramFile file = open_bytes(serialize(std::move(program)));
  auto json = program_to_json(file);
  ASSERT_TRUE(json.ok());
  const auto at = json->find("\"inline_data\": [\n");
  ASSERT_NE(at, std::string::npos);
  std::string broken = *json;
  broken.insert(at + std::strlen("\"inline_data\": [\n"), "7,\n");
  auto parsed = program_from_json(broken);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::InlineDataMismatch);
}

TEST(Writer, AlignsStoragesAndSegment) {
  auto program = testdata::corpus_programs()[5].build();  // shared_storage: several storages
  ProgramFile file = open_bytes(serialize(std::move(program)));
  EXPECT_EQ(file.layout().segment_offset % 4096, 0u);
  EXPECT_EQ(file.layout().flatbuffer_offset, 64u);
  for (const auto* storage : *file.program().storages()) {
    EXPECT_EQ(storage->offset() % 64, 0u);
    EXPECT_GE(storage->alignment(), 64u);
  }
  // Views share storages: three storages back eight weights.
  EXPECT_EQ(file.program().storages()->size(), 3u);
  EXPECT_EQ(file.program().weights()->size(), 8u);
}

TEST(Writer, LeavesNoFileBehindOnFailure) {
  const std::string dir = ::testing::TempDir();
  const std::string path = dir + "/never_written.nrt";
  auto program = testdata::corpus_programs()[0].build();
  program.storages.pop_back();  // storages and byte ranges disagree: the writer refuses
  std::vector<std::span<const uint8_t>> spans = spans_of(program);
  Status status = write_program_file(path, std::move(program.program), spans);
  EXPECT_FALSE(status.ok());
  EXPECT_FALSE(std::filesystem::exists(path));
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find("never_written.nrt.tmp"), std::string::npos) << entry.path();
  }
}

TEST(Convert, RecognisesFormatsByContent) {
  const std::string dir = ::testing::TempDir();
  // A .nrt file with a misleading name is still read as .nrt.
  std::filesystem::copy_file("testdata/mlp.nrt", dir + "/mlp.bin", std::filesystem::copy_options::overwrite_existing);
  auto head = read_file_head(dir + "/mlp.bin", kFormatHeadBytes);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(format_from_head(*head, dir + "/mlp.bin"), ProgramFormat::kNrt);
  Status status = convert_program(dir + "/mlp.bin", dir + "/mlp.nrt.json", {}, {});
  ASSERT_TRUE(status.ok()) << status.error().to_string();
  head = read_file_head(dir + "/mlp.nrt.json", kFormatHeadBytes);
  ASSERT_TRUE(head.ok());
  EXPECT_EQ(format_from_head(*head, dir + "/mlp.nrt.json"), ProgramFormat::kNrtJson);
  status = convert_program(dir + "/mlp.nrt.json", dir + "/back.nrt", {}, {});
  ASSERT_TRUE(status.ok()) << status.error().to_string();
  auto original = read_file("testdata/mlp.nrt");
  auto back = read_file(dir + "/back.nrt");
  ASSERT_TRUE(original.ok() && back.ok());
  EXPECT_EQ(*original, *back);
}

}  // namespace
}  // namespace nrt
