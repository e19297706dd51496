// nrt-run's work: open and verify the program, load it into an executor (every kernel checked
// first), bind inputs, run it --repeat times, write and compare outputs, report. Exit status:
// 0 ok, 1 an output does not match --expect, 2 usage, I/O, an invalid program or a failed run.
#pragma once

#include "cli/run_options.h"

namespace nrt::cli {

inline constexpr int kRunOk = 0;
inline constexpr int kRunMismatch = 1;
inline constexpr int kRunFailed = 2;

int run_program_command(const RunOptions& options);

}  // namespace nrt::cli
