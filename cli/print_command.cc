#include "cli/print_command.h"

#include <spdlog/spdlog.h>

#include <iostream>

#include "cli/exit_status.h"
#include "cli/program_input.h"
#include "serializer/program_text.h"

namespace nrt::cli {

CLI::App* add_print_command(CLI::App& app, PrintCommand& command) {
  CLI::App* sub = app.add_subcommand("print", "Print graphs as text, one node per line");
  sub->footer(
      "Nodes read `%y : f32[8,64] = aten::add.Tensor(%x, %w, alpha=1)`. Entry points come first, each with "
      "its signature as `# input` / `# output` lines, then subgraphs.");
  sub->add_option("file", command.path, "Program file (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON)")->required();
  sub->add_option("--graph", command.graph, "Print only the graph with this name");
  return sub;
}

int run_print_command(const PrintCommand& command, const TerminalStyle& style) {
  auto file = open_program_input(command.path, {});
  if (!file) {
    spdlog::error("{}", printable(file.error().to_string()));
    return exit_status_for(file.error());
  }
  const fb::Program& program = file->program();
  const TextStyle text_style = style.text_style();
  if (command.graph.empty()) {
    std::cout << render_program(program, text_style);
  } else {
    auto text = render_named_graph(program, command.graph, text_style);
    if (!text) {
      spdlog::error("no graph named '{}' in {}; graphs: {}", printable(command.graph), command.path,
                    graph_names(program));
      return kExitUsage;
    }
    std::cout << *text;
  }
  std::cout.flush();
  if (!std::cout) {
    spdlog::error("cannot write to stdout");
    return kExitUsage;
  }
  return kExitOk;
}

}  // namespace nrt::cli
