// `nrt-inspect convert IN -o OUT [--from F] [--to F] [--deep]`: converts between .nrt and
// .nrt.json (serializer/convert_program.h). Formats come from --from/--to, else from the file
// names, else (input only) from the content. The output is verified before it is written,
// atomically. Exit 0, 1 for an invalid input, 2 for usage or I/O trouble.
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace nrt::cli {

struct ConvertCommand {
  std::string in_path;
  std::string out_path;
  std::string from;  // empty: by name, then content
  std::string to;    // empty: by name
  bool deep = false;
};

CLI::App* add_convert_command(CLI::App& app, ConvertCommand& command);
int run_convert_command(const ConvertCommand& command);

}  // namespace nrt::cli
