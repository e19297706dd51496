// The printers of nrt-inspect (info, info --json, print, hash, diff) are linear in nodes and
// metadata entries. Each command runs (as a user runs it: the nrt-inspect binary, output to a
// file) on a program of N nodes and M program-level metadata entries, and on one of N/4 and M/4;
// the line per command gives both times and their ratio over 4: about 1 for linear work, about
// 4 for quadratic. Full size: N = 100,000 nodes, M = 1,000,000 entries; --smoke: 4,000 / 40,000.
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "bench/bench_target.h"
#include "bench/bench_timing.h"
#include "bench/scratch_dir.h"
#include "bench/synthetic_program.h"
#include "serializer/write_program.h"

namespace {

using nrt::bench::ScratchDir;

// nrt-inspect beside this binary in Bazel's runfiles, else in bazel-bin (CI runs from the root).
std::string inspect_binary(const char* argv0) {
  for (const std::string& candidate : {std::string(argv0) + ".runfiles/nrt/cli/nrt-inspect",
                                      std::string("bazel-bin/cli/nrt-inspect")}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

bool write_program(const std::string& path, uint32_t nodes, uint32_t entries, const std::string& last_value) {
  nrt::fb::ProgramT program = nrt::bench::make_ladder_program(nodes);
  for (uint32_t i = 0; i < entries; ++i) {
    auto entry = std::make_unique<nrt::fb::KeyValueT>();
    entry->key = "producer.fact." + std::to_string(i);
    entry->value = i + 1 == entries ? last_value : "value " + std::to_string(i);
    program.metadata.push_back(std::move(entry));
  }
  std::vector<uint8_t> weight(nrt::bench::kLadderWeightBytes, 0);
  std::vector<std::span<const uint8_t>> storages = {weight};
  auto status = nrt::write_program_file(path, std::move(program), storages);
  if (!status) std::fprintf(stderr, "printers_bench: %s\n", status.error().to_string().c_str());
  return status.ok();
}

// Seconds for `binary args...`, stdout to `out`; negative when it fails (diff's exit 1 is fine).
double run_seconds(const std::string& binary, const std::vector<std::string>& args, const std::string& out,
                   bool difference_expected) {
  std::string command = "'" + binary + "'";
  for (const auto& a : args) command += " '" + a + "'";
  command += " >'" + out + "' 2>&1";
  int status = 0;
  const double seconds = nrt::bench::median_seconds(1, [&] { status = std::system(command.c_str()); });
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (code == 0 || (difference_expected && code == 1)) return seconds;
  std::fprintf(stderr, "printers_bench: '%s' exited with %d\n", command.c_str(), code);
  return -1;
}

}  // namespace

int main(int argc, char** argv) {
  const bool smoke = nrt::bench::smoke_requested(argc, argv);
  const uint32_t nodes = smoke ? 4000 : 100000;
  const uint32_t entries = smoke ? 40000 : 1000000;
  const std::string binary = inspect_binary(argv[0]);
  if (binary.empty()) {
    std::fprintf(stderr, "printers_bench: nrt-inspect not found (run from the repository root or through Bazel)\n");
    return 1;
  }
  ScratchDir dir("printers_bench");
  struct Size {
    uint32_t nodes, entries;
    std::string a, b;
  };
  std::vector<Size> sizes = {{nodes / 4, entries / 4, dir.file("quarter_a.nrt"), dir.file("quarter_b.nrt")},
                             {nodes, entries, dir.file("full_a.nrt"), dir.file("full_b.nrt")}};
  for (const Size& s : sizes) {
    if (!write_program(s.a, s.nodes, s.entries, "a") || !write_program(s.b, s.nodes, s.entries, "b")) return 1;
  }
  struct Command {
    const char* name;
    const char* target_name;  // name without spaces, for the target line
    std::vector<std::string> args;  // FILE and OTHER stand for the two programs
    bool difference_expected;
  };
  const std::vector<Command> commands = {
      {"info", "info", {"info", "FILE"}, false},
      {"info --json", "info_json", {"info", "--json", "FILE"}, false},
      {"print", "print", {"print", "FILE"}, false},
      {"hash", "hash", {"hash", "FILE"}, false},
      {"diff", "diff", {"diff", "FILE", "OTHER"}, true},
      {"diff --json", "diff_json", {"diff", "--json", "FILE", "OTHER"}, true},
  };
  std::printf("printers_bench: %u nodes, %u metadata entries (and a quarter of each)\n", nodes, entries);
  bool ok = true;
  for (const Command& c : commands) {
    double seconds[2] = {0, 0};
    for (size_t i = 0; i < sizes.size(); ++i) {
      std::vector<std::string> args;
      for (const auto& a : c.args) args.push_back(a == "FILE" ? sizes[i].a : a == "OTHER" ? sizes[i].b : a);
      seconds[i] = run_seconds(binary, args, dir.file("out.txt"), c.difference_expected);
      ok = ok && seconds[i] >= 0;
    }
    const double ratio = seconds[0] > 0 ? seconds[1] / (4 * seconds[0]) : 0;
    std::printf("%-12s quarter %8.3f s  full %8.3f s  full/(4*quarter) %.2f\n", c.name, seconds[0], seconds[1], ratio);
    // No number is stated: linear work gives about 1, quadratic about 4, so <= 2 tells them apart.
    // A failed run has no ratio (NaN: MISSED).
    const bool measured = seconds[0] > 0 && seconds[1] >= 0;
    nrt::bench::report_target(std::string("printers_bench/") + c.target_name + "_full_over_4x_quarter",
                              measured ? ratio : std::nan(""), nrt::bench::Goal::kAtMost, 2.0);
  }
  return ok ? 0 : 1;
}
