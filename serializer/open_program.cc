#include "serializer/open_program.h"

#include <algorithm>
#include <mutex>
#include <span>

#include "serializer/atomic_file.h"
#include "serializer/temporary_file.h"
#include "serializer/input_limits.h"
#include "serializer/read_file.h"
#include "serializer/write_program.h"

namespace nrt {
namespace {

Result<ProgramWithWeights> import_nrt_json(const std::string& path, const OpenOptions&, std::vector<std::string>*) {
  NRT_TRY(text, read_file(path, kMaxNrtJsonBytes));
  return program_from_json(*text);
}

// A file as it is, or, when its Program was rewritten (ProgramFile::with_program), that Program with
// the original's weights streamed after it.
Status save_nrt(const ProgramFile& file, const std::string& path, const SaveOptions&) {
  if (!file.rewritten()) return write_file_atomically(path, file.file_bytes());
  fb::ProgramT program;
  file.program().UnPackTo(&program);
  std::vector<std::span<const uint8_t>> storages;
  for (uint32_t i = 0; i < program.storages.size(); ++i) storages.push_back(file.storage_bytes(i));
  return write_program_file(path, std::move(program), storages);
}

Status save_nrt_json(const ProgramFile& file, const std::string& path, const SaveOptions&) {
  NRT_TRY(json, program_to_json(file));
  return write_file_atomically(path, {reinterpret_cast<const uint8_t*>(json->data()), json->size()});
}

// The table, by format. .nrt has no importer: it is opened in place.
struct ImporterTable {
  std::mutex mutex;
  std::optional<ProgramImporter> entries[std::size(kAllProgramFormats)];

  ImporterTable() {
    entries[static_cast<size_t>(ProgramFormat::kNrt)] = ProgramImporter{ProgramFormat::kNrt, nullptr, &save_nrt};
    entries[static_cast<size_t>(ProgramFormat::kNrtJson)] =
        ProgramImporter{ProgramFormat::kNrtJson, &import_nrt_json, &save_nrt_json};
  }
  std::optional<ProgramImporter> find(ProgramFormat format) {
    const std::lock_guard lock(mutex);
    return entries[static_cast<size_t>(format)];
  }
};

ImporterTable& importers() {
  static ImporterTable table;
  return table;
}

Error with_path(const std::string& path, const Error& error) {
  return make_error(error.code, path + ": " + error.message);
}

Error not_linked(ProgramFormat format, const char* what) {
  return make_error(ErrorCode::NotSupported, std::string("no ") + what + " for " + std::string(format_name(format)) +
                                                 " programs is linked (link //serializer/torch_export)");
}

// The format to write `path` in: forced, else the one its name says.
Result<ProgramFormat> output_format(const std::string& path, const SaveOptions& options) {
  if (options.format) return *options.format;
  if (auto by_name = format_from_extension(path)) return *by_name;
  return make_error(ErrorCode::UnknownFormat, "cannot tell the output format of '" + path +
                                                  "' from its name; use --to nrt|nrt.json|pt2|torch.json");
}

// The format of `path`: forced, else one read of its head, else its name, else .nrt.
Result<ProgramFormat> format_of(const std::string& path, const OpenOptions& options) {
  if (options.format) return *options.format;
  NRT_TRY(head, read_file_head(path, kFormatHeadBytes));
  if (auto by_content = format_from_head(*head, path)) return *by_content;
  return format_from_extension(path).value_or(ProgramFormat::kNrt);
}

}  // namespace

void register_importer(const ProgramImporter& importer) {
  ImporterTable& table = importers();
  const std::lock_guard lock(table.mutex);
  table.entries[static_cast<size_t>(importer.format)] = importer;
}

std::vector<ProgramFormat> openable_formats() {
  std::vector<ProgramFormat> formats;
  for (const ProgramFormat f : kAllProgramFormats) {
    if (f == ProgramFormat::kNrt) {
      formats.push_back(f);
    } else if (auto entry = importers().find(f); entry && entry->import) {
      formats.push_back(f);
    }
  }
  return formats;
}

Result<ProgramFile> verify_in_memory(ProgramWithWeights program, const VerifyOptions& options) {
  std::vector<std::span<const uint8_t>> spans;
  spans.reserve(program.storages.size());
  for (const auto& s : program.storages) spans.emplace_back(s.data(), s.size());
  NRT_TRY(bytes, serialize_program(std::move(program.program), spans));
  return ProgramFile::from_bytes(std::move(*bytes), options);
}

Result<ProgramFile> open_program(const std::string& path, const OpenOptions& options) {
  NRT_TRY(format, format_of(path, options));
  if (*format == ProgramFormat::kNrt) return ProgramFile::open(path, options.verify);
  const auto entry = importers().find(*format);
  if (!entry || entry->import == nullptr) return with_path(path, not_linked(*format, "importer"));
  std::vector<std::string> warnings;
  auto program = entry->import(path, options, &warnings);
  if (options.warn) {
    for (const auto& w : warnings) options.warn(w);
  }
  if (!program) {
    // Errors that already start with the file's name (reading it: caps, I/O) keep their text.
    const bool named = program.error().message.starts_with(path);
    return named ? program.error() : with_path(path, program.error());
  }
  auto file = verify_in_memory(std::move(*program), options.verify);
  if (!file) return with_path(path, file.error());
  return file;
}

Result<ProgramFile> open_program_bytes(std::span<const uint8_t> bytes, const OpenOptions& options) {
  static constexpr std::string_view kName = "<bytes>";
  const std::string_view head(reinterpret_cast<const char*>(bytes.data()), std::min(bytes.size(), kFormatHeadBytes));
  const ProgramFormat format = options.format.value_or(format_from_head(head, "").value_or(ProgramFormat::kNrt));
  if (format == ProgramFormat::kNrt) {
    auto file = ProgramFile::from_bytes(std::vector<uint8_t>(bytes.begin(), bytes.end()), options.verify);
    if (!file) return with_path(std::string(kName), file.error());
    return file;
  }
  NRT_TRY(temporary, TemporaryFile::create(format == ProgramFormat::kPt2 ? ".pt2" : ".json"));
  NRT_RETURN_IF_ERROR(temporary->write(bytes));
  OpenOptions forced = options;
  forced.format = format;
  auto file = open_program(temporary->path(), forced);
  if (!file) {
    // The temporary file's name means nothing to the caller.
    std::string message = file.error().message;
    for (size_t at; (at = message.find(temporary->path())) != std::string::npos;) {
      message.replace(at, temporary->path().size(), kName);
    }
    return make_error(file.error().code, std::move(message));
  }
  return file;
}

Status save_program(const ProgramFile& file, const std::string& path, const SaveOptions& options) {
  NRT_TRY(format, output_format(path, options));
  const auto entry = importers().find(*format);
  if (!entry || entry->save == nullptr) return not_linked(*format, "writer");
  return entry->save(file, path, options);
}

Status save_program(ProgramWithWeights program, const std::string& path, ProgramFormat format) {
  NRT_TRY(file, verify_in_memory(std::move(program)));
  SaveOptions options;
  options.format = format;
  return save_program(*file, path, options);
}

Status convert_program(const std::string& in_path, const std::string& out_path, const OpenOptions& open,
                       const SaveOptions& save) {
  NRT_RETURN_IF_ERROR(output_format(out_path, save));  // before reading the input
  NRT_TRY(file, open_program(in_path, open));
  return save_program(*file, out_path, save);
}

}  // namespace nrt
