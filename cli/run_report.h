// What nrt-run reports: per-run times (median over --repeat), planned memory, each user output
// (type, where it was written, how it compared with --expect). As text for people (stdout), or
// as one JSON object (--json). Infinite errors (a NaN or infinity mismatch) are null in JSON.
// Under a launcher each rank's object also carries "rank" and "world_size" and is printed on one
// line (rank 0 prints every rank's, in rank order).
#pragma once

#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "executor/comm/communication_counts.h"
#include "io/compare_outputs.h"
#include "executor/runtime/run_profile.h"
#include "core/error.h"

namespace nrt::cli {

struct OutputReport {
  std::string name;
  std::string type;      // f32[8,4], or "int" / "float" / "bool" for scalars
  std::string path;      // where it was written; empty when not
  std::string expected;  // the --expect file; empty when not compared
  std::optional<exec::Comparison> comparison;
};

// Which rank of how many a JSON object speaks for (runs under a launcher).
struct RankInfo {
  int rank = 0;
  int world_size = 1;
};

struct RunReport {
  std::string file;
  int world_size = 1;  // ranks that ran the program (the text report is rank 0's)
  std::string graph;
  std::string device;
  std::vector<double> times_ms;  // one per run
  uint64_t arena_bytes = 0;
  uint64_t naive_bytes = 0;
  uint64_t live_peak_bytes = 0;
  double atol = 0;
  double rtol = 0;
  std::vector<OutputReport> outputs;
  // Collectives this rank issued in the last run and the bytes it sent (communication_counts.h).
  std::vector<exec::CollectiveCount> collectives;
  // --profile: rows per op target and per node, largest total first.
  std::optional<std::vector<exec::ProfileRow>> profile_targets, profile_nodes;

  double median_ms() const;
  bool all_match() const;  // every compared output matched
};

void print_run_text(const RunReport& report, std::FILE* out);  // the profile tables too, when present
void print_profile_text(const RunReport& report, std::FILE* out);
// Indented, or with `rank` one line with the rank fields.
std::string run_json(const RunReport& report, int exit_code, std::optional<RankInfo> rank = std::nullopt);
std::string error_json(const Error& error, int exit_code, std::optional<RankInfo> rank = std::nullopt);

}  // namespace nrt::cli
