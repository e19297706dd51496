// `nrt-inspect info FILE [--json] [--check-ops]`: what a program holds (program_summary.h) as
// aligned text, or as one JSON object on stdout. --check-ops also lists, per entry point, the
// targets the CPU executor has no kernel for (without running anything) and then exits 1 when
// any is missing. Exit 0, 1 for an invalid file (or missing kernels), 2 for I/O trouble.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "cli/terminal_style.h"

namespace nrt::cli {

struct InfoCommand {
  std::string path;
  bool json = false;
  bool check_ops = false;
  std::string device = "cpu";                 // whose kernels --check-ops checks
  std::vector<std::string> kernel_libraries;  // loaded before --check-ops looks up kernels
  bool kernel_library_override = false;       // a library may replace existing kernels
};

// Registers the subcommand; parsing fills `command`, which must outlive `app`'s parse.
CLI::App* add_info_command(CLI::App& app, InfoCommand& command);
int run_info_command(const InfoCommand& command, const TerminalStyle& style);

}  // namespace nrt::cli
