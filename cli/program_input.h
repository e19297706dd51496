// Opens the program a subcommand reads, in any format nrt reads (.nrt, .nrt.json, torch.export
// .pt2 and ExportedProgram JSON), verified. The content decides the format when it is
// recognisable; otherwise the name does, and anything else is opened as a container so that its
// real defect (too small, bad magic) is reported. Every other format is imported, then verified
// through its binary form, so all meet the same checks.
#pragma once

#include <string>

#include "serializer/error.h"
#include "serializer/program_file.h"
#include "serializer/verify_options.h"

namespace nrt::cli {

Result<ProgramFile> open_program_input(const std::string& path, const VerifyOptions& options);

}  // namespace nrt::cli
