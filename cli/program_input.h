// Opens the program a subcommand reads, in either format, verified. The content decides the
// format when it is recognisable (container magic, or JSON text); otherwise the name does
// (`.nrt.json`), and anything else is opened as a container so that its real defect (too small,
// bad magic) is reported. .nrt.json text is parsed, then verified through its binary form, so
// both formats meet the same checks.
#pragma once

#include <string>

#include "serializer/error.h"
#include "serializer/program_file.h"
#include "serializer/verify_options.h"

namespace nrt::cli {

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options);

}  // namespace nrt::cli
