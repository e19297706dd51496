// open_program: every format nrt reads opens, verified once, through one call (a library user gets
// exactly what the tools do); content decides over a wrong extension; unrecognisable or truncated
// content reports its real defect; import warnings reach the caller's callback; saving goes through
// the same table.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "serializer/open_program.h"
#include "serializer/read_file.h"
#include "tests/torch_export/test_files.h"

namespace nrt::test {
namespace {

TEST(OpenProgram, EveryFormatOpensVerified) {
  const std::string dir = scratch_dir("open_every_format");
  const std::string nrt = nrt_corpus_dir() + "/mlp.nrt";
  const std::string nrt_json = nrt_corpus_dir() + "/mlp.nrt.json";
  const std::string pt2 = torch_corpus_dir() + "/mlp/model.pt2";
  // torch's JSON, written from the .pt2 through the same table.
  auto from_pt2 = open_program(pt2);
  ASSERT_TRUE(from_pt2.ok()) << from_pt2.error().to_string();
  const std::string torch_json = dir + "/model.json";
  ASSERT_TRUE(save_program(*from_pt2, torch_json).ok());
  for (const std::string& path : {nrt, nrt_json, pt2, torch_json}) {
    auto file = open_program(path);
    ASSERT_TRUE(file.ok()) << path << ": " << file.error().to_string();
    EXPECT_GT(file->program().graphs()->size(), 0u) << path;
  }
  // The .nrt file and its .nrt.json form are one program, byte for byte once serialized.
  auto a = open_program(nrt);
  auto b = open_program(nrt_json);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(std::ranges::equal(a->file_bytes(), b->file_bytes()));
}

TEST(OpenProgram, EveryFormatIsOpenableWhenTorchExportIsLinked) {
  const auto formats = openable_formats();
  for (const ProgramFormat f : kAllProgramFormats) {
    EXPECT_NE(std::find(formats.begin(), formats.end(), f), formats.end()) << format_name(f);
    EXPECT_EQ(format_from_name(format_name(f)), f);
  }
}

TEST(OpenProgram, ContentDecidesOverAWrongExtension) {
  const std::string dir = scratch_dir("open_wrong_extension");
  // A .pt2 named .nrt still opens as the archive it is, and a .nrt named .json as a container.
  write_bytes(dir + "/archive.nrt", read_bytes(torch_corpus_dir() + "/mlp/model.pt2"));
  EXPECT_TRUE(open_program(dir + "/archive.nrt").ok());
  write_bytes(dir + "/container.json", read_bytes(nrt_corpus_dir() + "/mlp.nrt"));
  EXPECT_TRUE(open_program(dir + "/container.json").ok());
  // A forced format is trusted: a .nrt file read as a .pt2 is a corrupt archive.
  auto forced = open_program(nrt_corpus_dir() + "/mlp.nrt", {.format = ProgramFormat::kPt2});
  ASSERT_FALSE(forced.ok());
  EXPECT_NE(forced.error().code, ErrorCode::UnknownFormat) << forced.error().to_string();
}

TEST(OpenProgram, DefectsAreReported) {
  const std::string dir = scratch_dir("open_defects");
  // Garbage is opened as a container: its defect, not "unknown format", is the error.
  std::vector<uint8_t> garbage_bytes(128, 0);
  const std::string text = "not a program, not an archive";
  std::copy(text.begin(), text.end(), garbage_bytes.begin());
  write_bytes(dir + "/garbage.bin", garbage_bytes);
  auto garbage = open_program(dir + "/garbage.bin");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().code, ErrorCode::BadMagic) << garbage.error().to_string();
  auto missing = open_program(dir + "/absent.nrt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::IoOpen);
  // A truncated head: each format cut short is refused with an error naming the file.
  for (const std::string& source : {nrt_corpus_dir() + "/mlp.nrt", nrt_corpus_dir() + "/mlp.nrt.json",
                                    torch_corpus_dir() + "/mlp/model.pt2"}) {
    const auto bytes = read_bytes(source);
    const std::string name = std::filesystem::path(source).filename().string();
    for (const size_t keep : {size_t{3}, size_t{40}, bytes.size() / 2}) {
      const std::string cut = dir + "/cut_" + std::to_string(keep) + "_" + name;
      write_bytes(cut, std::vector<uint8_t>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)));
      auto opened = open_program(cut);
      ASSERT_FALSE(opened.ok()) << cut;
      EXPECT_NE(opened.error().to_string().find("cut_"), std::string::npos) << opened.error().to_string();
    }
  }
}

TEST(OpenProgram, ImportWarningsReachTheCallback) {
  // The corpus archives carry sample inputs, which nrt does not import: one warning.
  std::vector<std::string> warnings;
  OpenOptions options;
  options.warn = [&](const std::string& line) { warnings.push_back(line); };
  auto file = open_program(torch_corpus_dir() + "/mlp/model.pt2", options);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("not imported"), std::string::npos) << warnings[0];
}

// open_program_bytes: the same program from its bytes as from its file, in every format; errors
// name "<bytes>", never the temporary file an importer read, and that file is gone afterwards.
TEST(OpenProgram, BytesOpenAsTheirFileDoes) {
  for (const std::string& path : {nrt_corpus_dir() + "/mlp.nrt", nrt_corpus_dir() + "/mlp.nrt.json",
                                  torch_corpus_dir() + "/mlp/model.pt2"}) {
    auto from_file = open_program(path);
    ASSERT_TRUE(from_file.ok()) << from_file.error().to_string();
    const auto bytes = read_bytes(path);
    auto from_bytes = open_program_bytes(bytes);
    ASSERT_TRUE(from_bytes.ok()) << path << ": " << from_bytes.error().to_string();
    EXPECT_TRUE(std::ranges::equal(from_file->file_bytes(), from_bytes->file_bytes())) << path;
  }
  const auto archive = read_bytes(torch_corpus_dir() + "/mlp/model.pt2");
  auto cut = open_program_bytes(std::span<const uint8_t>(archive).first(archive.size() / 2));
  ASSERT_FALSE(cut.ok());
  EXPECT_EQ(cut.error().message.rfind("<bytes>", 0), 0u) << cut.error().to_string();
  EXPECT_EQ(cut.error().message.find("/nrt-"), std::string::npos) << "names the temporary file: " << cut.error().message;
  std::vector<uint8_t> short_container(10, 0);
  auto too_small = open_program_bytes(short_container);
  ASSERT_FALSE(too_small.ok());
  EXPECT_EQ(too_small.error().code, ErrorCode::FileTooSmall) << too_small.error().to_string();
}

// check(): a file verified at open verifies again; deep finds a weight byte changed after it.
TEST(OpenProgram, CheckVerifiesAgainAndDeepReadsTheWeights) {
  auto bytes = read_bytes(nrt_corpus_dir() + "/mlp.nrt");
  bytes.back() ^= 0xff;  // the last weight byte: structure intact, checksum wrong
  auto file = ProgramFile::from_bytes(bytes);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_TRUE(file->check({}).ok());
  const Status deep = file->check({.deep = true});
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.error().code, ErrorCode::ChecksumMismatch) << deep.error().to_string();
}

TEST(OpenProgram, SavingNeedsAFormat) {
  auto file = open_program(nrt_corpus_dir() + "/mlp.nrt");
  ASSERT_TRUE(file.ok());
  const std::string dir = scratch_dir("open_save");
  auto status = save_program(*file, dir + "/out.bin");
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code, ErrorCode::UnknownFormat);
  EXPECT_TRUE(list_dir(dir).empty());
  SaveOptions as_json;
  as_json.format = ProgramFormat::kNrtJson;
  ASSERT_TRUE(save_program(*file, dir + "/out.bin", as_json).ok());
  auto back = open_program(dir + "/out.bin");
  ASSERT_TRUE(back.ok()) << back.error().to_string();
  EXPECT_TRUE(std::ranges::equal(file->file_bytes(), back->file_bytes()));
}

}  // namespace
}  // namespace nrt::test
