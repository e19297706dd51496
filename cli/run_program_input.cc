#include "cli/run_program_input.h"

#include <spdlog/spdlog.h>

#include "cli/program_input.h"
#include "serializer/convert_program.h"
#include "serializer/torch_export/convert_any.h"

namespace nrt::cli {

Result<ProgramFile> open_run_program(const std::string& path) {
  using torch_export::AnyFormat;
  auto format = torch_export::sniff_any_format(path);
  if (format && (*format == AnyFormat::kPt2 || *format == AnyFormat::kTorchJson)) {
    torch_export::AnyConvertOptions options;
    options.from = *format;
    options.warn = [&](const std::string& line) { spdlog::warn("{}: {}", path, line); };
    auto program = torch_export::load_any_program(path, options);
    if (!program) return program.error();
    auto file = verify_in_memory(std::move(*program));
    if (!file) return make_error(file.error().code, path + ": " + file.error().message);
    return file;
  }
  // nrt's formats, and anything unrecognised: opening it as nrt reports its real defect.
  return open_program_input(path, VerifyOptions{});
}

}  // namespace nrt::cli
