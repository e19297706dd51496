// open_any_program: every format nrt reads opens, verified, through one call (a library user gets
// exactly what the tools do); unrecognisable content reports its real defect, and import warnings
// reach the caller's callback.
#include <gtest/gtest.h>

#include <algorithm>

#include "serializer/torch_export/open_any.h"
#include "tests/torch_export/test_files.h"

namespace nrt::test {
namespace {

TEST(OpenAny, EveryFormatOpensVerified) {
  const std::string nrt = nrt_corpus_dir() + "/mlp.nrt";
  const std::string nrt_json = nrt_corpus_dir() + "/mlp.nrt.json";
  const std::string pt2 = torch_corpus_dir() + "/mlp/model.pt2";
  for (const std::string& path : {nrt, nrt_json, pt2}) {
    auto file = torch_export::open_any_program(path);
    ASSERT_TRUE(file.ok()) << path << ": " << file.error().to_string();
    EXPECT_GT(file->program().graphs()->size(), 0u) << path;
  }
  // The .nrt file and its .nrt.json form are one program.
  auto a = torch_export::open_any_program(nrt);
  auto b = torch_export::open_any_program(nrt_json);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->program().graphs()->Get(0)->nodes()->size(), b->program().graphs()->Get(0)->nodes()->size());
}

TEST(OpenAny, ContentDecidesAndDefectsAreReported) {
  const std::string dir = scratch_dir("open_any");
  // A .pt2 named .nrt still opens as the archive it is.
  write_bytes(dir + "/archive.nrt", read_bytes(torch_corpus_dir() + "/mlp/model.pt2"));
  EXPECT_TRUE(torch_export::open_any_program(dir + "/archive.nrt").ok());
  // Garbage is opened as a container: its defect, not "unknown format", is the error.
  std::vector<uint8_t> garbage_bytes(128, 0);
  const std::string text = "not a program, not an archive";
  std::copy(text.begin(), text.end(), garbage_bytes.begin());
  write_bytes(dir + "/garbage.bin", garbage_bytes);
  auto garbage = torch_export::open_any_program(dir + "/garbage.bin");
  ASSERT_FALSE(garbage.ok());
  EXPECT_EQ(garbage.error().code, ErrorCode::BadMagic) << garbage.error().to_string();
  auto missing = torch_export::open_any_program(dir + "/absent.nrt");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::IoOpen);
}

TEST(OpenAny, ImportWarningsReachTheCallback) {
  // The corpus archives carry sample inputs, which nrt does not import: one warning.
  std::vector<std::string> warnings;
  torch_export::OpenAnyOptions options;
  options.warn = [&](const std::string& line) { warnings.push_back(line); };
  auto file = torch_export::open_any_program(torch_corpus_dir() + "/mlp/model.pt2", options);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("not imported"), std::string::npos) << warnings[0];
}

}  // namespace
}  // namespace nrt::test
