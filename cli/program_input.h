// Opens the program a subcommand reads, in any format nrt reads, verified
// (serializer/torch_export/open_any.h), its import warnings logged.
#pragma once

#include <string>

#include "core/error.h"
#include "serializer/program_file.h"
#include "serializer/verify_options.h"

namespace nrt::cli {

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options);

}  // namespace nrt::cli
