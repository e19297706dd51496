#include "cli/program_input.h"

#include <spdlog/spdlog.h>

#include "serializer/program_text.h"
#include "serializer/torch_export/open_any.h"

namespace nrt::cli {

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options) {
  torch_export::OpenAnyOptions open;
  open.verify = options;
  open.warn = [](const std::string& warning) { spdlog::warn("{}", printable(warning)); };
  return torch_export::open_any_program(path, open);
}

}  // namespace nrt::cli
