// Writes the compatibility corpus (corpus_programs.h) as DIR/<name>.nrt and DIR/<name>.nrt.json.
// Usage: make_testdata DIR   (scripts/regenerate_testdata.sh runs it on testdata/)
// Files of released schema versions must keep loading: regenerate only when the corpus grows,
// and keep old files (see docs/FORMAT.md).
#include <cstdio>
#include <string>

#include "serializer/open_program.h"
#include "testdata/corpus_programs.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_testdata DIR\n");
    return 2;
  }
  const std::string dir = argv[1];
  for (const auto& entry : nrt::testdata::corpus_programs()) {
    for (auto format : {nrt::ProgramFormat::kNrt, nrt::ProgramFormat::kNrtJson}) {
      const std::string path = dir + "/" + entry.name + "." + std::string(nrt::format_name(format));
      if (nrt::Status s = nrt::save_program(entry.build(), path, format); !s) {
        std::fprintf(stderr, "make_testdata: %s: %s\n", path.c_str(), s.error().to_string().c_str());
        return 1;
      }
      std::printf("wrote %s\n", path.c_str());
    }
  }
  return 0;
}
