// Opens the program nrt-run runs, in any format, verified (serializer/torch_export/open_any.h),
// its import warnings logged with the file's name.
#pragma once

#include <string>

#include "core/error.h"
#include "serializer/program_file.h"

namespace nrt::cli {

Result<ProgramFile> open_run_program(const std::string& path);

}  // namespace nrt::cli
