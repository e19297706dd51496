// Flags of nrt-run (CLI11). Parsing only; run_command.h does the work.
#pragma once

#include "session/run_job.h"

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nrt::cli {

struct RunOptions {
  RunJob job;      // what to run (session/run_job.h)
  bool json = false;
  int verbosity = 0;
  bool quiet = false;
};

void add_run_options(CLI::App& app, RunOptions& options);

}  // namespace nrt::cli
