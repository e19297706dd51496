// What a tool's run reports (session/run_job.h): per-run times, planned memory, each user output
// (type, where it was written, how it compared), the collectives of the last run and the profile.
// Printing it (text, JSON) is the front end's (cli/run_report.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "executor/comm/communication_counts.h"
#include "executor/runtime/run_profile.h"
#include "io/compare_outputs.h"

namespace nrt {

struct OutputReport {
  std::string name;
  std::string type;      // f32[8,4], or "int" / "float" / "bool" for scalars
  std::string path;      // where it was written; empty when not
  std::string expected;  // the expected file; empty when not compared
  std::optional<exec::Comparison> comparison;
};

struct RunReport {
  std::string file;
  int world_size = 1;  // ranks that ran the program
  std::string graph;
  std::string device;
  std::vector<double> times_ms;  // one per run
  int repeat = 1;                // runs asked for
  int warmup = 0;                // untimed runs done before them (fewer than asked if a signal came)
  // The signal that stopped the repeats (SIGINT, SIGTERM: session/run_interruption.h), or 0; when
  // set, times_ms holds the runs completed and no output was written or compared.
  int interrupted_by = 0;
  uint64_t arena_bytes = 0;
  uint64_t naive_bytes = 0;
  uint64_t live_peak_bytes = 0;
  double atol = 0;
  double rtol = 0;
  std::vector<OutputReport> outputs;
  // Collectives this rank issued in the last run and the bytes it sent (communication_counts.h).
  std::vector<exec::CollectiveCount> collectives;
  // Profiled runs: rows per op target and per node, largest total first.
  std::optional<std::vector<exec::ProfileRow>> profile_targets, profile_nodes;

  double median_ms() const;
  bool all_match() const;  // every compared output matched
};

}  // namespace nrt
