#include "cli/convert_command.h"

#include <spdlog/spdlog.h>

#include "cli/exit_status.h"
#include "serializer/open_program.h"
#include "serializer/program_text.h"

namespace nrt::cli {

CLI::App* add_convert_command(CLI::App& app, ConvertCommand& command) {
  CLI::App* sub = app.add_subcommand("convert", "Convert a program between .nrt, .nrt.json, .pt2 and torch.export JSON");
  sub->footer(
      "Formats: nrt (.nrt), nrt.json (.nrt.json), pt2 (torch.export archive, .pt2), torch.json "
      "(ExportedProgram JSON, .json). The input format comes from --from, else the content, else the "
      "name; the output format from --to, else the name. The program is verified before anything is "
      "written; the output is replaced atomically.");
  sub->add_option("input", command.in_path, "Input program file")->required();
  sub->add_option("-o,--output", command.out_path, "Output file, replaced atomically")->required();
  sub->add_option("--from", command.from, "Input format (default: from the content, then the name)")
      ->check(CLI::IsMember({"nrt", "nrt.json", "pt2", "torch.json"}));
  sub->add_option("--to", command.to, "Output format (default: from the output name)")
      ->check(CLI::IsMember({"nrt", "nrt.json", "pt2", "torch.json"}));
  sub->add_option("--model", command.model,
                  "pt2 input: import only this model; torch output: export only this entry point");
  sub->add_flag("--deep", command.deep, "Also check the input's storage checksums (reads all weights)");
  return sub;
}

int run_convert_command(const ConvertCommand& command) {
  OpenOptions open;
  SaveOptions save;
  if (!command.from.empty()) open.format = format_from_name(command.from);
  if (!command.to.empty()) save.format = format_from_name(command.to);
  open.verify.deep = command.deep;
  open.model = command.model;
  save.model = command.model;
  open.warn = [](const std::string& warning) { spdlog::warn("{}", printable(warning)); };
  if (Status status = convert_program(command.in_path, command.out_path, open, save); !status) {
    spdlog::error("{}", printable(status.error().to_string()));
    return exit_status_for(status.error());
  }
  spdlog::info("wrote {}", command.out_path);
  return kExitOk;
}

}  // namespace nrt::cli
