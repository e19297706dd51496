// Writes the verifier tests' sample program (tests/verify/sample_program.h) as sample.nrt and
// sample.nrt.json into two directories: seeds for the fuzz targets that exist even before
// testdata/ holds any program. Usage: make_fuzz_seeds NRT_DIR JSON_DIR
#include <cstdio>
#include <fstream>
#include <string>

#include "serializer/json_form.h"
#include "tests/verify/sample_program.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s NRT_DIR JSON_DIR\n", argv[0]);
    return 2;
  }
  auto file = nrt::testing::serialize_and_open(nrt::testing::make_sample_program());
  if (!file) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", file.error().to_string().c_str());
    return 1;
  }
  auto json = nrt::program_to_json(*file);
  if (!json) {
    std::fprintf(stderr, "make_fuzz_seeds: %s\n", json.error().to_string().c_str());
    return 1;
  }
  std::ofstream nrt(std::string(argv[1]) + "/sample.nrt", std::ios::binary);
  nrt.write(reinterpret_cast<const char*>(file->file_bytes().data()),
            static_cast<std::streamsize>(file->file_bytes().size()));
  std::ofstream text(std::string(argv[2]) + "/sample.nrt.json", std::ios::binary);
  text << *json;
  return nrt && text ? 0 : 1;
}
