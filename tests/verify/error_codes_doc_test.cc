// docs/ERRORS.md documents every error code of core/error.h: each code's id ("NRT-E302")
// appears on a line that also names it ("ValueIndexOutOfRange"), and every id the document
// mentions is a real code. Ok (NRT-E000) is not an error: it may be listed, need not be.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/error.h"

namespace nrt {
namespace {

struct CodeInfo {
  ErrorCode code;
  std::string id;
  std::string name;
};

std::vector<CodeInfo> all_codes() {
  std::vector<CodeInfo> codes;
#define NRT_LIST_CODE(name, number, summary) \
  if (ErrorCode::name != ErrorCode::Ok) codes.push_back({ErrorCode::name, error_id(ErrorCode::name), #name});
  NRT_ERROR_CODES(NRT_LIST_CODE)
#undef NRT_LIST_CODE
  return codes;
}

std::vector<std::string> doc_lines() {
  std::ifstream in("docs/ERRORS.md");  // runfiles-relative: the test runs in the workspace root
  EXPECT_TRUE(in.good()) << "docs/ERRORS.md is missing from the test's runfiles";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ErrorCodesDoc, EveryCodeIsDocumentedWithItsIdAndName) {
  const auto lines = doc_lines();
  ASSERT_FALSE(lines.empty());
  for (const auto& info : all_codes()) {
    bool id_found = false, named = false;
    for (const auto& line : lines) {
      if (line.find(info.id) == std::string::npos) continue;
      id_found = true;
      named = named || line.find(info.name) != std::string::npos;
    }
    EXPECT_TRUE(id_found) << info.id << " (" << info.name << ") is not in docs/ERRORS.md";
    EXPECT_TRUE(!id_found || named) << "no line of docs/ERRORS.md has both " << info.id << " and " << info.name;
  }
}

TEST(ErrorCodesDoc, EveryDocumentedIdExists) {
  std::set<std::string> known{error_id(ErrorCode::Ok)};
  for (const auto& info : all_codes()) known.insert(info.id);
  size_t ids = 0;
  for (const auto& line : doc_lines()) {
    for (size_t at = line.find("NRT-E"); at != std::string::npos; at = line.find("NRT-E", at + 1)) {
      size_t end = at + 5;
      while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
      const std::string id = line.substr(at, end - at);
      ++ids;
      EXPECT_TRUE(known.count(id)) << "docs/ERRORS.md mentions " << id << ", which error.h lacks";
    }
  }
  EXPECT_GE(ids, known.size() - 1);
}

}  // namespace
}  // namespace nrt
