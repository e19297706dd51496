#include "cli/program_input.h"

#include <spdlog/spdlog.h>

#include "serializer/convert_program.h"
#include "serializer/program_text.h"
#include "serializer/torch_export/convert_any.h"

namespace nrt::cli {

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options) {
  using torch_export::AnyFormat;
  auto sniffed = torch_export::sniff_any_format(path);
  if (!sniffed && sniffed.error().code == ErrorCode::IoOpen) return sniffed.error();
  // Unrecognisable content is opened as a container, so that its real defect is reported.
  const AnyFormat format = sniffed ? *sniffed : torch_export::any_format_from_extension(path).value_or(AnyFormat::kNrt);
  if (format == AnyFormat::kNrt) return ProgramFile::open(path, options);
  torch_export::AnyConvertOptions load;
  load.from = format;
  load.verify = options;
  load.warn = [](const std::string& warning) { spdlog::warn("{}", printable(warning)); };
  auto program = torch_export::load_any_program(path, load);
  if (!program) return program.error();
  auto file = verify_in_memory(std::move(*program));
  if (!file) return make_error(file.error().code, path + ": " + file.error().message);
  return file;
}

}  // namespace nrt::cli
