// Opens the program a command reads, in any format nrt reads, verified once
// (serializer/open_program.h), its import warnings logged with the file's name.
#pragma once

#include <functional>
#include <string>

#include "core/error.h"
#include "serializer/program_file.h"
#include "serializer/verify_options.h"

namespace nrt::cli {

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options = {});

// The warning callback open_program_input uses: one log line per warning, naming `path`.
std::function<void(const std::string&)> log_warnings_of(const std::string& path);

}  // namespace nrt::cli
