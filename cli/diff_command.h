// `nrt-inspect diff A B [--json]`: structural diff after canonical alignment
// (serializer/program_diff.h): nodes added, removed or changed (target, argument, type),
// interface and signature changes, meshes, process groups, weights (with the largest absolute
// element difference). Exit 0 same, 1 different, 2 trouble.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/terminal_style.h"

namespace nrt::cli {

struct DiffCommand {
  std::string a;
  std::string b;
  bool json = false;
};

CLI::App* add_diff_command(CLI::App& app, DiffCommand& command);
int run_diff_command(const DiffCommand& command, const TerminalStyle& style);

}  // namespace nrt::cli
