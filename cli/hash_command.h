// `nrt-inspect hash FILE [--json] [--explain] [--algo xxh3|sha256] [--threads N]`: the canonical
// structure, weights and full digests (serializer/program_hash.h). --explain adds one digest per
// graph, signature, node and storage, so two programs' differences can be located. Warns on
// stderr when strings carried object addresses (canonicalized before hashing). A progress bar
// shows on a terminal while large weights are hashed.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/terminal_style.h"

namespace nrt::cli {

struct HashCommand {
  std::string path;
  bool json = false;
  bool explain = false;
  std::string algorithm = "xxh3";
  unsigned threads = 0;
};

CLI::App* add_hash_command(CLI::App& app, HashCommand& command);
int run_hash_command(const HashCommand& command, const TerminalStyle& style);

}  // namespace nrt::cli
