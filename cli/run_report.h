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

#include "session/run_report.h"
#include "core/error.h"

namespace nrt::cli {

// Which rank of how many a JSON object speaks for (runs under a launcher).
struct RankInfo {
  int rank = 0;
  int world_size = 1;
};

void print_run_text(const RunReport& report, std::FILE* out);  // the profile tables too, when present
void print_profile_text(const RunReport& report, std::FILE* out);
// Indented, or with `rank` one line with the rank fields.
std::string run_json(const RunReport& report, int exit_code, std::optional<RankInfo> rank = std::nullopt);
std::string error_json(const Error& error, int exit_code, std::optional<RankInfo> rank = std::nullopt);

}  // namespace nrt::cli
