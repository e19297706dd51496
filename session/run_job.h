// A run as the tools make one (nrt-run, and the Python package's run of files): join the world of
// ranks (mpirun or none), open a Session, take inputs from .npy files or generate them, run it
// `warmup` + `repeat` times, profile, write the outputs as .npy files and compare them with expected ones.
// {rank} in the file, input paths, output, expect and trace paths is the world rank.
//
// Under a launcher every rank calls it. Failures before the run are agreed (every rank returns
// the same failure); a rank whose run fails, or whose agreement collective fails, calls
// `abandon`, since the others may be waiting for it in a collective.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/comm/rank_world.h"
#include "session/run_report.h"

namespace nrt {

struct RunJob {
  std::string file;                    // {rank} in it: each rank runs its own program
  std::string graph;                   // empty: the first entry point
  std::vector<std::string> inputs;     // NAME=PATH.npy
  std::optional<uint64_t> random_seed; // generate the inputs not given (io/random_inputs.h)
  std::vector<std::string> kernel_libraries;
  bool kernel_library_override = false;
  std::string output_dir;              // empty: outputs are not written
  bool local_outputs = false;          // DTensor outputs: each rank's shard, not the global value
  std::string expect_dir;              // empty: outputs are not compared
  double atol = 1e-5;
  double rtol = 1e-5;
  int repeat = 1;
  // Runs before the timed ones, left out of the times, the profile and the trace: the first run
  // pays for one-time work (oneDNN compiles its kernels, constant nodes are kept) that a serving
  // process pays once.
  int warmup = 0;
  std::string max_memory;              // "512M"; empty: NRT_MAX_MEMORY, else the executor's default
  bool poison_freed = false;
  std::string device = "cpu";          // cpu, cuda or cuda:N (core/device.h)
  bool allow_tf32 = false;
  int threads = 0;                     // threads inside ops (SessionOptions::threads); 0: unset
  uint64_t seed = 0;                   // the seeded random ops' seed (SessionOptions::seed)
  bool profile = false;                // time per op target and per node
  std::string profile_trace;           // Chrome trace-event JSON of the last run
  // Called during repeated runs, at most every half second and once when they end, with the runs
  // completed so far and their times (a tool shows progress on a terminal).
  std::function<void(int done, int total, const std::vector<double>& times_ms)> progress;
  std::string world_name = "nrt world";
  // Called once the world is joined, before anything else (e.g. to name the rank in log lines).
  std::function<void(const exec::RankWorld&)> joined;
  // Ends the job from a rank that cannot go on (see above); must not return. Default: log, flush
  // and end every rank (exec::abort_mpi_world).
  std::function<void(const Error&)> abandon;
};

// kInterrupted: SIGINT or SIGTERM stopped repeated runs (RunReport::interrupted_by) in a process
// started without a launcher; the report holds the runs completed.
enum class RunStatus { kOk, kMismatch, kFailed, kInterrupted };

struct RunOutcome {
  RunStatus status = RunStatus::kOk;
  std::optional<Error> error;       // kFailed
  std::optional<RunReport> report;  // the run completed
  exec::RankWorld world;            // where it ran (a world of one when joining failed)
};

RunOutcome run_job(const RunJob& job);

}  // namespace nrt
