// libFuzzer target: arbitrary bytes as an .nrt file. Opening must give a clean error or a
// verified program whose every field can be read (UnPack) and printed (program_to_json) without
// a crash, an out-of-bounds read or undefined behaviour. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "serializer/json_form.h"
#include "serializer/program_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<uint8_t> bytes(data, data + size);
  auto file = nrt::ProgramFile::from_bytes(std::move(bytes), nrt::VerifyOptions{.deep = true});
  if (!file) return 0;
  auto unpacked = nrt::unpack_program(*file);
  auto json = nrt::program_to_json(*file);
  (void)json;
  return 0;
}
