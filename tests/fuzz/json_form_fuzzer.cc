// libFuzzer target: arbitrary text as .nrt.json. Parsing must give a clean error or a program the
// writer can serialize, and the written bytes must open (or be refused) cleanly; a program that
// verifies is printed back. Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "serializer/json_form.h"
#include "serializer/program_file.h"
#include "serializer/write_program.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = nrt::program_from_json(text);
  if (!parsed) return 0;
  std::vector<std::span<const uint8_t>> storages(parsed->storages.begin(), parsed->storages.end());
  auto bytes = nrt::serialize_program(parsed->program, storages);
  if (!bytes) return 0;
  auto file = nrt::ProgramFile::from_bytes(std::move(*bytes), nrt::VerifyOptions{.deep = true});
  if (!file) return 0;
  auto json = nrt::program_to_json(*file);
  (void)json;
  return 0;
}
