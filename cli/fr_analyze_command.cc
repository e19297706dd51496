#include "cli/fr_analyze_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>

#include "cli/exit_status.h"
#include "executor/comm/flight_recorder_analysis.h"
#include "serializer/read_file.h"

namespace nrt::cli {

// A dump of 2000 entries is well under a megabyte; the bound keeps a wrong file from being slurped.
constexpr uint64_t kMaxDumpBytes = uint64_t{1} << 30;

CLI::App* add_fr_analyze_command(CLI::App& app, FrAnalyzeCommand& command) {
  CLI::App* sub = app.add_subcommand(
      "fr-analyze", "Match the flight recorder dumps of a job's ranks and name the first mismatch");
  sub->footer(
      "Dumps are what nrt-run writes to <NRT_FR_DUMP_PREFIX><rank>.json on a collective timeout, a failed "
      "collective, SIGTERM or SIGUSR1, and at exit with NRT_FR_DUMP_ON_EXIT=1 (docs/COLLECTIVES.md). Entries "
      "are matched by process group and sequence number: a rank that never entered a collective others "
      "entered, ops, sizes or dtypes that differ, ranks without a dump. Exit 0 when the dumps agree, 1 "
      "when they do not, 2 when one cannot be read.");
  sub->add_option("dumps", command.paths, "Flight recorder dumps, one per rank (nrt_fr_trace_<rank>.json)")
      ->required();
  sub->add_flag("--json", command.json,
                R"(Print {"agree", "world_size", "ranks", "groups", "findings", "first_mismatch"} as JSON)");
  return sub;
}

int run_fr_analyze_command(const FrAnalyzeCommand& command) {
  std::vector<exec::FlightRecorderDump> dumps;
  for (const auto& path : command.paths) {
    auto text = read_file(path, kMaxDumpBytes);
    if (!text) {
      spdlog::error("{}", text.error().to_string());
      return kExitUsage;
    }
    auto dump = exec::flight_recorder_dump_from_json(*text);
    if (!dump) {
      spdlog::error("{}: {}", path, dump.error().to_string());
      return kExitUsage;
    }
    dumps.push_back(std::move(*dump));
  }
  auto analysis = exec::analyze_flight_recorder(dumps);
  if (!analysis) {
    spdlog::error("{}", analysis.error().to_string());
    return kExitUsage;
  }
  const std::string out = command.json ? exec::analysis_json(*analysis) : exec::analysis_text(*analysis);
  std::fputs(out.c_str(), stdout);
  return analysis->agree() ? kExitOk : kExitInvalid;
}

}  // namespace nrt::cli
