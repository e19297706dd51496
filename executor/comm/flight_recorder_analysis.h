// Matches the flight recorder dumps of a job's ranks (executor/comm/flight_recorder.h) by process group
// and collective sequence number and names what disagrees: ranks that never entered a collective
// the others entered (a rank behind, or one that took another branch), ranks whose collective of
// one sequence number differs in op, sizes or dtypes, ranks without a dump, ranks that describe one
// group differently (its size, or two claiming one group rank). The dumps agree only when there
// was something to compare: dumps holding no collective (NRT_FR_BUFFER_SIZE=0) are a finding of
// their own. Names from the dumps are printed escaped; huge findings are summarized. What
// `nrt-inspect fr-analyze` prints (docs/COLLECTIVES.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "executor/comm/flight_recorder.h"

namespace nrt::exec {

struct FlightRecorderFinding {
  std::string kind;          // "missing_dump", "nothing_recorded", "inconsistent_group", "not_entered",
                             // "op_mismatch", "size_mismatch", "dtype_mismatch"
  std::string group;         // empty for missing_dump
  int64_t seq = 0;           // collective_seq_id; 0 for missing_dump
  std::string op;            // what the ranks that entered it issued
  std::string node;
  std::vector<int> ranks;    // the ranks at fault (never entered, or the minority)
  std::vector<int> others;   // the ranks they disagree with
  std::string message;
};

struct FlightRecorderGroupSummary {
  std::string name;
  int size = 0;
  std::vector<std::pair<int, int64_t>> last_seq;  // (rank, last collective_seq_id it recorded)
  int64_t incomplete = 0;  // entries not completed, on any rank
};

struct FlightRecorderAnalysis {
  std::vector<int> ranks;  // the ranks whose dumps were read
  int world_size = 0;
  std::vector<FlightRecorderGroupSummary> groups;
  std::vector<FlightRecorderFinding> findings;  // ordered: the first is the first mismatch
  bool agree() const { return findings.empty(); }
};

// Dumps of one job; two dumps of one rank, or disagreeing world sizes, are InvalidArgument.
Result<FlightRecorderAnalysis> analyze_flight_recorder(const std::vector<FlightRecorderDump>& dumps);

std::string analysis_json(const FlightRecorderAnalysis& analysis);
std::string analysis_text(const FlightRecorderAnalysis& analysis);

}  // namespace nrt::exec
