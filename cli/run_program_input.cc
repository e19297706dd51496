#include "cli/run_program_input.h"

#include <spdlog/spdlog.h>

#include "serializer/program_text.h"
#include "serializer/torch_export/open_any.h"

namespace nrt::cli {

Result<ProgramFile> open_run_program(const std::string& path) {
  torch_export::OpenAnyOptions open;
  // Warnings quote the file's own text: escaped, as every printer of it is.
  open.warn = [&](const std::string& line) { spdlog::warn("{}: {}", path, printable(line)); };
  return torch_export::open_any_program(path, open);
}

}  // namespace nrt::cli
