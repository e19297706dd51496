#include "cli/convert_command.h"

#include <spdlog/spdlog.h>

#include "cli/exit_status.h"
#include "serializer/convert_program.h"
#include "serializer/program_text.h"

namespace nrt::cli {

CLI::App* add_convert_command(CLI::App& app, ConvertCommand& command) {
  CLI::App* sub = app.add_subcommand("convert", "Convert a program between .nrt and .nrt.json");
  sub->footer("The input is verified before anything is written; the output is replaced atomically.");
  sub->add_option("input", command.in_path, "Input program file")->required();
  sub->add_option("-o,--output", command.out_path, "Output file, replaced atomically")->required();
  sub->add_option("--from", command.from, "Input format (default: from the name, then the content)")
      ->check(CLI::IsMember({"nrt", "nrt.json"}));
  sub->add_option("--to", command.to, "Output format (default: from the output name)")
      ->check(CLI::IsMember({"nrt", "nrt.json"}));
  sub->add_flag("--deep", command.deep, "Also check the input's storage checksums (reads all weights)");
  return sub;
}

int run_convert_command(const ConvertCommand& command) {
  ConvertOptions options;
  if (!command.from.empty()) options.from = format_from_name(command.from);
  if (!command.to.empty()) options.to = format_from_name(command.to);
  options.verify.deep = command.deep;
  if (Status status = convert_program(command.in_path, command.out_path, options); !status) {
    spdlog::error("{}", printable(status.error().to_string()));
    return exit_status_for(status.error());
  }
  spdlog::info("wrote {}", command.out_path);
  return kExitOk;
}

}  // namespace nrt::cli
