#include "cli/program_input.h"

#include <span>
#include <vector>

#include "serializer/convert_program.h"
#include "serializer/json_form.h"
#include "serializer/read_file.h"
#include "serializer/write_program.h"

namespace nrt::cli {
namespace {

Result<ProgramFile> open_json(const std::string& path, const VerifyOptions& options) {
  auto text = read_file(path);
  if (!text) return text.error();
  auto parsed = program_from_json(*text);
  if (!parsed) return make_error(parsed.error().code, path + ": " + parsed.error().message);
  std::vector<std::span<const uint8_t>> spans;
  for (const auto& storage : parsed->storages) spans.emplace_back(storage.data(), storage.size());
  auto bytes = serialize_program(std::move(parsed->program), spans);
  if (!bytes) return make_error(bytes.error().code, path + ": " + bytes.error().message);
  auto file = ProgramFile::from_bytes(std::move(*bytes), options);
  if (!file) return make_error(file.error().code, path + ": " + file.error().message);
  return file;
}

}  // namespace

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options) {
  auto sniffed = sniff_format(path);
  if (!sniffed && sniffed.error().code == ErrorCode::IoOpen) return sniffed.error();
  ProgramFormat format = ProgramFormat::kNrt;
  if (sniffed) {
    format = *sniffed;
  } else if (auto by_name = format_from_extension(path)) {
    format = *by_name;
  }
  if (format == ProgramFormat::kNrtJson) return open_json(path, options);
  return ProgramFile::open(path, options);
}

}  // namespace nrt::cli
