#include "cli/program_input.h"

#include <spdlog/spdlog.h>

#include "serializer/open_program.h"
#include "serializer/program_text.h"

namespace nrt::cli {

std::function<void(const std::string&)> log_warnings_of(const std::string& path) {
  // Warnings quote the file's own text: escaped, as every printer of it is.
  return [path](const std::string& line) { spdlog::warn("{}: {}", printable(path), printable(line)); };
}

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options) {
  OpenOptions open;
  open.verify = options;
  open.warn = log_warnings_of(path);
  return open_program(path, open);
}

}  // namespace nrt::cli
