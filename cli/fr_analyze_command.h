// `nrt-inspect fr-analyze DUMP... [--json]`: reads the flight recorder dumps of a job's ranks
// (nrt-run writes <NRT_FR_DUMP_PREFIX><rank>.json) and names the first mismatch between them
// (executor/comm/flight_recorder_analysis.h). Exit 0 when the dumps agree, 1 when they do not, 2 when
// a dump cannot be read.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace nrt::cli {

struct FrAnalyzeCommand {
  std::vector<std::string> paths;
  bool json = false;
};

CLI::App* add_fr_analyze_command(CLI::App& app, FrAnalyzeCommand& command);
int run_fr_analyze_command(const FrAnalyzeCommand& command);

}  // namespace nrt::cli
