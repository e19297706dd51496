// `nrt-inspect verify FILE [--deep] [--json]`: runs every structural and semantic check
// (ProgramFile); --deep also checks each storage's XXH3-128 checksum (reads all weights).
// The verdict goes to stdout: `valid: FILE`, or `invalid: NRT-E302 ValueIndexOutOfRange: FILE: ...`;
// with --json one object {"valid", "code", "name", "message"}. Exit 0 valid, 1 invalid, 2 when
// the file cannot be read (the verdict is then not about the file's content).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

#include "cli/terminal_style.h"

namespace nrt::cli {

struct VerifyCommand {
  std::string path;
  bool deep = false;
  bool json = false;
};

CLI::App* add_verify_command(CLI::App& app, VerifyCommand& command);
int run_verify_command(const VerifyCommand& command, const TerminalStyle& style);

}  // namespace nrt::cli
