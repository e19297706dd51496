#include "cli/hash_command.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/exit_status.h"
#include "cli/program_input.h"
#include "serializer/program_hash.h"
#include "serializer/program_text.h"

namespace nrt::cli {
namespace {

// Weights smaller than this hash too fast for a progress bar to help.
constexpr uint64_t kProgressThresholdBytes = uint64_t{256} << 20;

void show_progress(uint64_t done, uint64_t total) {
  const double fraction = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const int width = 30;
  const int filled = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\rhashing weights [%.*s%*s] %3.0f%% of %.2f GB", filled, "##############################",
               width - filled, "", fraction * 100, static_cast<double>(total) / 1e9);
  if (done >= total) std::fprintf(stderr, "\n");
  std::fflush(stderr);
}

}  // namespace

CLI::App* add_hash_command(CLI::App& app, HashCommand& command) {
  CLI::App* sub = app.add_subcommand("hash", "Print the canonical structure, weights and full digests");
  sub->footer(
      "Digests are facts about the program, never about a process: renaming values, reordering independent "
      "nodes, metadata, map key order, file layout and memory addresses in reprs do not change them.");
  sub->add_option("file", command.path, "Program file (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON)")->required();
  sub->add_flag("--json", command.json, R"(Print {"structure", "weights", "full", ...} as JSON on stdout)");
  sub->add_flag("--explain", command.explain, "Also print one digest per graph, signature, node and storage");
  sub->add_option("--algo", command.algorithm, "Digest algorithm")->check(CLI::IsMember({"xxh3", "sha256"}));
  sub->add_option("--threads", command.threads, "Threads hashing weights, 1 to 1024 (default: one per core)")
      ->check(CLI::Range(1, 1024));
  return sub;
}

int run_hash_command(const HashCommand& command, const TerminalStyle& style) {
  auto file = open_program_input(command.path, {});
  if (!file) {
    spdlog::error("{}", printable(file.error().to_string()));
    return exit_status_for(file.error());
  }
  HashOptions options;
  options.algorithm = *algorithm_from_name(command.algorithm);
  options.threads = command.threads;
  uint64_t weight_bytes = 0;
  for (uint32_t s = 0; file->program().storages() && s < file->program().storages()->size(); ++s) {
    weight_bytes += file->program().storages()->Get(s)->size();
  }
  if (isatty(STDERR_FILENO) && weight_bytes >= kProgressThresholdBytes) options.progress = show_progress;
  const ProgramDigests digests = hash_program(*file, options);
  for (const auto& repr : digests.unstable_reprs) {
    spdlog::warn("unstable repr (memory address canonicalized before hashing): {}", printable(repr));
  }

  if (command.json) {
    nlohmann::ordered_json out = {{"algorithm", command.algorithm},
                                  {"structure", digests.structure.to_string()},
                                  {"weights", digests.weights.to_string()},
                                  {"full", digests.full.to_string()},
                                  {"unstable_reprs", digests.unstable_reprs}};
    if (command.explain) {
      auto parts = nlohmann::ordered_json::array();
      for (const auto& p : digests.parts) {
        parts.push_back({{"kind", p.kind}, {"name", p.name}, {"digest", p.digest.to_string()}});
      }
      out["parts"] = parts;
    }
    std::cout << out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else {
    std::cout << style.bold("structure") << "  " << digests.structure.to_string() << "\n"
              << style.bold("weights") << "    " << digests.weights.to_string() << "\n"
              << style.bold("full") << "       " << digests.full.to_string() << "\n";
    if (command.explain) {
      for (const auto& p : digests.parts) {
        std::cout << p.kind << std::string(p.kind.size() < 10 ? 10 - p.kind.size() : 1, ' ') << p.digest.to_string()
                  << "  " << printable(p.name) << "\n";
      }
    }
  }
  std::cout.flush();
  return std::cout ? kExitOk : kExitUsage;
}

}  // namespace nrt::cli
