#include "cli/verify_command.h"

#include <spdlog/spdlog.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/exit_status.h"
#include "cli/program_input.h"
#include "serializer/program_text.h"

namespace nrt::cli {

CLI::App* add_verify_command(CLI::App& app, VerifyCommand& command) {
  CLI::App* sub = app.add_subcommand("verify", "Check that a program is valid (exit 0 valid, 1 invalid, 2 unreadable)");
  sub->footer(
      "Checks the container, the FlatBuffer, every index, enum and weight range, SSA order, signatures, "
      "meshes, process groups and DTensor placements. Prints `valid: FILE` or `invalid: NRT-Ennn Name: message`.");
  sub->add_option("file", command.path, "Program file (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON)")->required();
  sub->add_flag("--deep", command.deep, "Also check every storage's XXH3-128 checksum (reads all weights)");
  sub->add_flag("--json", command.json, R"(Print {"valid", "code", "name", "message"} as JSON on stdout)");
  return sub;
}

int run_verify_command(const VerifyCommand& command, const TerminalStyle& style) {
  VerifyOptions options;
  options.deep = command.deep;
  auto file = open_program_input(command.path, options);
  const int status = file ? kExitOk : exit_status_for(file.error());
  if (command.json) {
    nlohmann::ordered_json out = {{"valid", file.ok()}, {"code", nullptr}, {"name", nullptr}, {"message", nullptr}};
    if (!file) {
      out["code"] = error_id(file.error().code);
      out["name"] = std::string(error_name(file.error().code));
      out["message"] = file.error().message;
    }
    std::cout << out.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else if (file) {
    std::cout << style.green("valid") << ": " << printable(command.path) << "\n";
  } else if (status == kExitInvalid) {
    // The message names the file already.
    std::cout << style.red("invalid") << ": " << printable(file.error().to_string()) << "\n";
  }
  // Trouble reading the file is not a verdict about it: report it as an error.
  if (status == kExitUsage) spdlog::error("{}", printable(file.error().to_string()));
  std::cout.flush();
  if (!std::cout) {
    spdlog::error("cannot write to stdout");
    return kExitUsage;
  }
  return status;
}

}  // namespace nrt::cli
