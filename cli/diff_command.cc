#include "cli/diff_command.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/exit_status.h"
#include "cli/program_input.h"
#include "serializer/program_diff.h"
#include "serializer/program_diff_json.h"
#include "serializer/program_text.h"

namespace nrt::cli {
namespace {

void print_text(const ProgramDiff& d, const TerminalStyle& style) {
  for (const auto& g : d.graphs_removed) std::cout << style.red("- graph " + printable(g)) << "\n";
  for (const auto& g : d.graphs_added) std::cout << style.green("+ graph " + printable(g)) << "\n";
  for (const auto& g : d.graphs) {
    std::cout << style.bold("graph " + printable(g.name)) << "\n";
    for (const auto& n : g.removed_nodes) std::cout << "  " << style.red("- " + printable(n)) << "\n";
    for (const auto& n : g.added_nodes) std::cout << "  " << style.green("+ " + printable(n)) << "\n";
    for (const auto& c : g.changed_nodes) {
      std::cout << "  ~ " << printable(c.a_node) << (c.a_node != c.b_node ? " -> " + printable(c.b_node) : "") << "\n";
      for (const auto& what : c.changes) std::cout << "      " << printable(what) << "\n";
    }
    for (const auto& i : g.interface_changes) std::cout << "  ~ " << printable(i) << "\n";
  }
  for (const auto& m : d.mesh_changes) std::cout << "mesh " << printable(m) << "\n";
  for (const auto& g : d.group_changes) std::cout << "process group " << printable(g) << "\n";
  for (const auto& w : d.weights) {
    std::cout << "weight " << printable(w.fqn) << ": " << printable(w.change);
    if (w.max_abs_diff) {
      char buf[64];
      std::snprintf(buf, sizeof buf, " (max abs diff %.6g)", *w.max_abs_diff);
      std::cout << buf;
    }
    std::cout << "\n";
  }
  std::cout << (d.same() ? style.green("same") : style.red("different")) << "\n";
}

}  // namespace

CLI::App* add_diff_command(CLI::App& app, DiffCommand& command) {
  CLI::App* sub = app.add_subcommand("diff", "Compare two programs structurally (exit 0 same, 1 different, 2 trouble)");
  sub->footer(
      "Nodes are aligned canonically: renamed values and reordered independent nodes are not differences. "
      "Changed weights report the largest absolute element difference.");
  sub->add_option("a", command.a, "First program (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON)")->required();
  sub->add_option("b", command.b, "Second program (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON)")->required();
  sub->add_flag("--json", command.json, "Print the complete diff as one JSON object on stdout");
  return sub;
}

int run_diff_command(const DiffCommand& command, const TerminalStyle& style) {
  auto a = open_program_input(command.a, {});
  auto b = open_program_input(command.b, {});
  for (const auto* file : {&a, &b}) {
    if (!*file) {
      spdlog::error("{}", printable(file->error().to_string()));
      return kExitUsage;  // an unreadable or invalid input is trouble, not a difference
    }
  }
  const ProgramDiff d = diff_programs(*a, *b);
  if (command.json) {
    std::cout << program_diff_json(d).dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  } else {
    print_text(d, style);
  }
  std::cout.flush();
  if (!std::cout) return kExitUsage;
  return d.same() ? kExitOk : kExitInvalid;
}

}  // namespace nrt::cli
