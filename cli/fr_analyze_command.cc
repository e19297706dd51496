#include "cli/fr_analyze_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include "cli/exit_status.h"
#include "executor/comm/flight_recorder_analysis.h"
#include "executor/comm/flight_recorder_torch.h"
#include "executor/runtime/memory_budget.h"
#include "serializer/read_file.h"

namespace nrt::cli {

// A dump of 2000 entries is well under a megabyte; the bound keeps a wrong file from being slurped.
constexpr uint64_t kMaxDumpBytes = uint64_t{1} << 30;

CLI::App* add_fr_analyze_command(CLI::App& app, FrAnalyzeCommand& command) {
  CLI::App* sub = app.add_subcommand(
      "fr-analyze", "Match the flight recorder dumps of a job's ranks and name the first mismatch");
  sub->footer(
      "Dumps are what nrt-run writes to <NRT_FR_DUMP_PREFIX><rank>.json on a collective timeout, a failed "
      "collective, SIGTERM or SIGUSR1, and at exit with NRT_FR_DUMP_ON_EXIT=1 (docs/COLLECTIVES.md); torch's "
      "pickled dumps (<prefix><rank>, as torch's flight recorder and NRT_FR_DUMP_FORMAT=torch write them) are "
      "read too, the rank from the name's trailing digits. Entries "
      "are matched by process group and sequence number: a rank that never entered a collective others "
      "entered, ops, sizes or dtypes that differ, ranks without a dump, ranks describing one group "
      "differently; dumps holding no collective are no verdict. Every field is checked against the dump's "
      "world. Reading is bounded by the memory budget (NRT_MAX_MEMORY, else the memory available). Exit 0 "
      "when the dumps agree, 1 when they do not or hold nothing to compare, 2 when one cannot be read.");
  sub->add_option("dumps", command.paths, "Flight recorder dumps, one per rank (nrt_fr_trace_<rank>.json, or torch's <prefix><rank>)")
      ->required();
  sub->add_flag("--json", command.json,
                R"(Print {"agree", "world_size", "ranks", "groups", "findings", "first_mismatch"} as JSON)");
  return sub;
}

// What reading the dumps up to and including `path` costs, about: each dump's text while it is
// parsed, and every dump's records after (measured: two dumps of 10^6 entries, 780 MB of text,
// peak at 1.64 GB; records take about 1.5 times their text).
uint64_t estimated_bytes(uint64_t texts_so_far, uint64_t largest_text) { return texts_so_far * 3 / 2 + largest_text; }

// torch's dumps are pickles (protocol 2 and later start with PROTO, 0x80); nrt's are JSON.
bool is_torch_dump(const std::string& bytes) { return !bytes.empty() && static_cast<uint8_t>(bytes[0]) == 0x80; }

// A torch dump names its rank only in its file name, as torch's loader reads it: the trailing digits.
Result<exec::FlightRecorderDump> torch_dump(const std::string& bytes, const std::string& path) {
  const std::string name = std::filesystem::path(path).filename().string();
  size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  if (digits == name.size() || name.size() - digits > 7) {
    return make_error(ErrorCode::InvalidArgument,
                      "a torch flight-recorder dump is named <prefix><rank>; this name ends in no rank");
  }
  const int rank = std::stoi(name.substr(digits));
  return exec::flight_recorder_dump_from_torch({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()}, rank,
                                               "torch dump of rank " + std::to_string(rank));
}

int run_fr_analyze_command(const FrAnalyzeCommand& command) {
  if (Status s = exec::apply_memory_budget(""); !s) {
    spdlog::error("{}", s.error().to_string());
    return kExitUsage;
  }
  // The memory budget is checked before anything is read, naming the dump that would pass it.
  const uint64_t budget = exec::memory_budget();
  uint64_t texts = 0, largest = 0;
  for (const auto& path : command.paths) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(path, ec);
    if (ec) continue;  // read_file names the problem below
    texts += size;
    largest = std::max(largest, size);
    if (estimated_bytes(texts, largest) > budget) {
      spdlog::error("{}", make_error(ErrorCode::MemoryBudgetExceeded,
                                     path + ": analysing the dumps up to this one takes about " +
                                         std::to_string(estimated_bytes(texts, largest) >> 20) + " MiB, past the memory budget of " +
                                         std::to_string(budget >> 20) + " MiB (NRT_MAX_MEMORY, else the memory available)")
                              .to_string());
      return kExitUsage;
    }
  }
  std::vector<exec::FlightRecorderDump> dumps;
  for (const auto& path : command.paths) {
    auto text = read_file(path, kMaxDumpBytes);
    if (!text) {
      spdlog::error("{}", text.error().to_string());
      return kExitUsage;
    }
    auto dump = is_torch_dump(*text) ? torch_dump(*text, path) : exec::flight_recorder_dump_from_json(*text);
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
