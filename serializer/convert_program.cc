#include "serializer/convert_program.h"

#include <cstdio>
#include <vector>

#include "serializer/atomic_file.h"
#include "serializer/container.h"
#include "serializer/input_limits.h"
#include "serializer/read_file.h"
#include "serializer/write_program.h"

namespace nrt {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::vector<std::span<const uint8_t>> spans_of(const std::vector<std::vector<uint8_t>>& storages) {
  std::vector<std::span<const uint8_t>> spans;
  spans.reserve(storages.size());
  for (const auto& s : storages) spans.emplace_back(s.data(), s.size());
  return spans;
}

}  // namespace

Result<ProgramFile> verify_in_memory(ProgramWithWeights program) {
  const auto spans = spans_of(program.storages);
  NRT_TRY(bytes, serialize_program(std::move(program.program), spans));
  return ProgramFile::from_bytes(std::move(*bytes));
}

std::string_view format_name(ProgramFormat format) {
  switch (format) {
    case ProgramFormat::kNrt:
      return "nrt";
    case ProgramFormat::kNrtJson:
      return "nrt.json";
  }
  return "?";
}

std::optional<ProgramFormat> format_from_name(std::string_view name) {
  if (name == "nrt") return ProgramFormat::kNrt;
  if (name == "nrt.json") return ProgramFormat::kNrtJson;
  return std::nullopt;
}

std::optional<ProgramFormat> format_from_extension(std::string_view path) {
  if (ends_with(path, ".nrt.json")) return ProgramFormat::kNrtJson;
  if (ends_with(path, ".nrt")) return ProgramFormat::kNrt;
  return std::nullopt;
}

Result<ProgramFormat> sniff_format(const std::string& path) {
  NRT_TRY(text, read_file_head(path, 256));
  const auto* head = reinterpret_cast<const uint8_t*>(text->data());
  const size_t n = text->size();
  if (has_container_magic({head, n})) return ProgramFormat::kNrt;
  for (size_t i = 0; i < n; ++i) {
    if (head[i] == ' ' || head[i] == '\n' || head[i] == '\r' || head[i] == '\t') continue;
    if (head[i] == '{') return ProgramFormat::kNrtJson;
    break;
  }
  return make_error(ErrorCode::UnknownFormat,
                    "'" + path + "' is neither an .nrt container nor .nrt.json text; use --from to say which");
}

Result<ProgramWithWeights> load_program(const std::string& path, std::optional<ProgramFormat> format,
                                        const VerifyOptions& options) {
  if (!format) {
    NRT_TRY(sniffed, sniff_format(path));
    format = *sniffed;
  }
  if (*format == ProgramFormat::kNrt) {
    NRT_TRY(file, ProgramFile::open(path, options));
    return unpack_program(*file);
  }
  NRT_TRY(text, read_file(path, kMaxNrtJsonBytes));
  auto parsed = program_from_json(*text);
  if (!parsed) return make_error(parsed.error().code, path + ": " + parsed.error().message);
  // Verify through the binary form; the program itself is returned unchanged.
  auto file = verify_in_memory(std::move(*parsed));
  if (!file) return make_error(file.error().code, path + ": " + file.error().message);
  return unpack_program(*file);
}

Status save_program(ProgramWithWeights program, const std::string& path, ProgramFormat format) {
  NRT_TRY(file, verify_in_memory(std::move(program)));
  if (format == ProgramFormat::kNrt) return write_file_atomically(path, file->file_bytes());
  NRT_TRY(json, program_to_json(*file));
  return write_file_atomically(path, {reinterpret_cast<const uint8_t*>(json->data()), json->size()});
}

Status convert_program(const std::string& in_path, const std::string& out_path, const ConvertOptions& options) {
  auto to = options.to ? options.to : format_from_extension(out_path);
  if (!to) {
    return make_error(ErrorCode::UnknownFormat,
                      "cannot tell the output format of '" + out_path + "' from its name; use --to nrt|nrt.json");
  }
  auto from = options.from ? options.from : format_from_extension(in_path);
  auto program = load_program(in_path, from, options.verify);
  if (!program && from && !options.from && program.error().code == ErrorCode::BadMagic) {
    program = load_program(in_path, std::nullopt, options.verify);  // extension lied; trust the content
  }
  if (!program) return program.error();
  return save_program(std::move(*program), out_path, *to);
}

}  // namespace nrt
