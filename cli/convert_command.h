// `nrt-inspect convert IN -o OUT [--from F] [--to F] [--model NAME] [--deep]`: converts between
// .nrt, .nrt.json, torch.export .pt2 archives and ExportedProgram JSON
// (serializer/open_program.h). Several inputs are the per-rank archives of one DTensor program
// (torch.export.save on each rank), merged into one program with global weights
// (executor/dtensor/merge_rank_programs.h). The output is verified before it is written,
// atomically. Exit 0, 1 for an invalid input, 2 for usage or I/O trouble.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace nrt::cli {

struct ConvertCommand {
  std::vector<std::string> in_paths;  // several: per-rank archives merged into one DTensor program
  std::string out_path;
  std::string from;  // empty: by name, then content
  std::string to;    // empty: by name
  std::string model;  // pt2 input model / torch output entry point
  bool deep = false;
};

CLI::App* add_convert_command(CLI::App& app, ConvertCommand& command);
int run_convert_command(const ConvertCommand& command);

}  // namespace nrt::cli
