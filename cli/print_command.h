// `nrt-inspect print FILE [--graph NAME]`: every graph as text (program_text.h), one node per
// line; entry points first, then subgraphs. Exit 0, 1 for an invalid file, 2 for I/O trouble or
// an unknown graph name.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/terminal_style.h"

namespace nrt::cli {

struct PrintCommand {
  std::string path;
  std::string graph;  // empty: all graphs
};

CLI::App* add_print_command(CLI::App& app, PrintCommand& command);
int run_print_command(const PrintCommand& command, const TerminalStyle& style);

}  // namespace nrt::cli
