// Opens the program nrt-run runs, verified: nrt's own formats (.nrt, .nrt.json; program_input.h)
// and torch.export's (.pt2 archives, ExportedProgram JSON), which are imported in memory
// (serializer/torch_export) and verified like any .nrt file before the executor sees them.
#pragma once

#include <string>

#include "serializer/error.h"
#include "serializer/program_file.h"

namespace nrt::cli {

Result<ProgramFile> open_run_program(const std::string& path);

}  // namespace nrt::cli
