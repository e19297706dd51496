// Flags of nrt-run (CLI11). Parsing only; run_command.h does the work.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nrt::cli {

struct RunOptions {
  std::string file;                    // {rank} in it: each rank runs its own program
  bool per_rank_program = false;       // set from `file` when it holds {rank}
  std::string graph;                   // empty: the first entry point
  std::vector<std::string> inputs;     // NAME=PATH.npy
  std::vector<std::string> kernel_libraries;  // loaded before the program
  bool kernel_library_override = false;       // a library may replace existing kernels
  std::optional<uint64_t> random_seed; // --random-inputs SEED
  std::string output_dir;
  bool local_outputs = false;          // DTensor outputs: each rank's shard, not the global value
  std::string expect_dir;
  double atol = 1e-5;
  double rtol = 1e-5;
  int repeat = 1;
  std::string max_memory;              // --max-memory SIZE; empty: NRT_MAX_MEMORY or the default
  bool json = false;
  bool poison_freed = false;
  bool profile = false;                // --profile: time per op target and per node
  std::string profile_trace;           // --profile-trace FILE: Chrome trace-event JSON
  int verbosity = 0;
  bool quiet = false;
};

void add_run_options(CLI::App& app, RunOptions& options);

}  // namespace nrt::cli
