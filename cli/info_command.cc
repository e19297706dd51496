#include "cli/info_command.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string_view>
#include <type_traits>
#include <vector>

#include "cli/exit_status.h"
#include "cli/flag_checks.h"
#include "executor/dtensor/sharding_pass.h"
#include "executor/runtime/allocator.h"
#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel_library.h"
#include "cli/program_input.h"
#include "serializer/program_summary.h"
#include "serializer/program_summary_json.h"
#include "serializer/program_text.h"

namespace nrt::cli {
namespace {

using json = nlohmann::ordered_json;

// --- text -------------------------------------------------------------------------------------

std::string human_bytes(uint64_t bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes);
  size_t unit = 0;
  while (value >= 1024.0 && unit + 1 < std::size(kUnits)) {
    value /= 1024.0;
    ++unit;
  }
  char buf[32];
  if (unit == 0) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(bytes));
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", value, kUnits[unit]);
  }
  return buf;
}

template <typename T>
std::string join(const std::vector<T>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    if constexpr (std::is_arithmetic_v<T>) {
      out += std::to_string(items[i]);
    } else {
      out += items[i];
    }
  }
  return out;
}

std::string padded(std::string text, size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

void print_slots(std::ostream& out, const char* title, const std::vector<SlotSummary>& slots) {
  out << "  " << title << (slots.empty() ? " (none)\n" : "\n");
  size_t name_width = 0;
  size_t type_width = 0;
  for (const auto& slot : slots) {
    name_width = std::max(name_width, slot.name.size() + 1);
    type_width = std::max(type_width, slot.type.size());
  }
  for (const auto& slot : slots) {
    std::string line = "    " + padded(slot.name.empty() ? "_" : "%" + slot.name, name_width) + "  " +
                       padded(slot.type, type_width);
    if (slot.signature_kind) line += "  " + *slot.signature_kind;
    if (slot.target) line += " " + *slot.target;
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

void print_text(std::ostream& out, const ProgramSummary& summary, const TerminalStyle& style) {
  const auto entry_points = std::count_if(summary.graphs.begin(), summary.graphs.end(),
                                          [](const GraphSummary& g) { return g.entry_point; });
  out << "schema version  " << summary.schema_version << "\n";
  if (!summary.producer.empty()) out << "producer        " << summary.producer << "\n";
  out << "graphs          " << summary.graphs.size() << " (" << entry_points << " entry point"
      << (entry_points == 1 ? "" : "s") << ")\n";
  out << "weights         " << summary.num_weights << " tensors in " << summary.num_storages << " storages, "
      << summary.weight_bytes << " bytes (" << human_bytes(summary.weight_bytes) << ")\n";
  out << "parameters      " << summary.num_parameters << "\n";

  for (const auto& graph : summary.graphs) {
    out << "\n"
        << (graph.entry_point ? "graph " : "subgraph ") << style.bold(graph.name) << ": " << graph.num_nodes
        << (graph.num_nodes == 1 ? " node, " : " nodes, ") << graph.num_values
        << (graph.num_values == 1 ? " value\n" : " values\n");
    print_slots(out, "inputs", graph.inputs);
    print_slots(out, "outputs", graph.outputs);
    // Most frequent first; ties by name, so the order is stable.
    std::vector<std::pair<std::string, uint64_t>> ops(graph.ops.begin(), graph.ops.end());
    std::stable_sort(ops.begin(), ops.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    out << "  ops" << (ops.empty() ? " (none)\n" : "\n");
    size_t count_width = 0;
    for (const auto& [target, n] : ops) count_width = std::max(count_width, std::to_string(n).size());
    for (const auto& [target, n] : ops) {
      const std::string number = std::to_string(n);
      out << "    " << std::string(count_width - number.size(), ' ') << number << "  " << target << "\n";
    }
  }

  if (!summary.meshes.empty()) {
    out << "\nmeshes\n";
    size_t name_width = 1;
    for (const auto& mesh : summary.meshes) name_width = std::max(name_width, mesh.name.size());
    for (size_t m = 0; m < summary.meshes.size(); ++m) {
      const auto& mesh = summary.meshes[m];
      out << "  " << m << "  " << padded(mesh.name.empty() ? "_" : mesh.name, name_width) << "  " << mesh.device_type
          << "  shape ["
          << join(mesh.shape, ",") << "]";
      if (!mesh.dim_names.empty()) out << "  dims [" << join(mesh.dim_names, ", ") << "]";
      out << "  ranks [" << join(mesh.ranks, ", ") << "]\n";
    }
  }
  if (!summary.process_groups.empty()) {
    out << "\nprocess groups\n";
    size_t name_width = 0;
    for (const auto& group : summary.process_groups) name_width = std::max(name_width, group.name.size());
    for (size_t p = 0; p < summary.process_groups.size(); ++p) {
      const auto& group = summary.process_groups[p];
      out << "  " << p << "  " << padded(group.name, name_width) << "  ranks [" << join(group.ranks, ", ") << "]";
      if (!group.backend.empty()) out << "  backend " << group.backend;
      if (group.mesh >= 0) out << "  mesh " << group.mesh << " dim " << group.mesh_dim;
      out << "\n";
    }
  }
  if (!summary.metadata.empty()) {
    out << "\nmetadata\n";
    for (const auto& [key, value] : summary.metadata) out << "  " << key << " = " << value << "\n";
  }
}

}  // namespace

CLI::App* add_info_command(CLI::App& app, InfoCommand& command) {
  CLI::App* sub = app.add_subcommand("info", "Summarize a program: graphs, ops, inputs and outputs, meshes, weights");
  sub->footer(
      "Per graph: node count, op histogram by target, inputs and outputs with dtype, shape, DTensor "
      "placements and mesh, and signature kind. Then meshes, process groups, weight bytes and the number "
      "of parameters (elements of weights marked as parameters).");
  sub->add_option("file", command.path, "Program file (.nrt, .nrt.json, torch.export .pt2 or ExportedProgram JSON)")->required();
  sub->add_flag("--json", command.json, "Print one JSON object on stdout instead of text");
  sub->add_flag("--check-ops", command.check_ops,
                "Also list the targets the executor has no kernel for on --device, exit 1 if any (nothing runs); "
                "for a DTensor program also the ops without a sharding rule, which run replicated "
                "(docs/DISTRIBUTED.md)");
  sub->add_option("--device", command.device,
                  "With --check-ops: the device whose kernels are checked: cpu (default), cuda or cuda:N (the kernels "
                  "this build has; no device is needed to check)")
      ->check(device_name());
  sub->add_option("--kernel-library", command.kernel_libraries,
                  "With --check-ops: load this kernel library (custom ops; executor/runtime/kernel_library.h) first; "
                  "repeatable")
      ->check(CLI::ExistingFile);
  sub->add_flag("--kernel-library-override", command.kernel_library_override,
                "Let --kernel-library replace kernels nrt already has (each replacement is warned about); "
                "without it such a library is refused");
  return sub;
}

int run_info_command(const InfoCommand& command, const TerminalStyle& style) {
  auto file = open_program_input(command.path, {});
  if (!file) {
    spdlog::error("{}", printable(file.error().to_string()));
    return exit_status_for(file.error());
  }
  const ProgramSummary summary = summarize_program(file->program());
  // Entry point name -> targets without a CPU kernel.
  std::vector<std::pair<std::string, std::vector<std::string>>> missing;
  bool any_missing = false;
  for (const auto& library : command.kernel_libraries) {
    auto loaded = exec::load_kernel_library(library, exec::KernelRegistry::global(), command.kernel_library_override);
    if (!loaded) {
      spdlog::error("{}", printable(loaded.error().to_string()));
      return exit_status_for(loaded.error());
    }
    spdlog::info("{}: {} kernel(s)", library, loaded->targets.size());
    for (const auto& replaced : loaded->replaced) spdlog::warn("{} replaces the kernel of {}", library, replaced);
  }
  auto device = parse_device(command.device);
  if (!device) {
    spdlog::error("{}", device.error().to_string());
    return exit_status_for(device.error());
  }
  const std::string kernels_of = device->kind == DeviceKind::kCpu ? "CPU" : "CUDA";
  if (command.check_ops && exec::allocator_for(device->kind) == nullptr) {
    spdlog::warn("this build has no {} backend: only its device-neutral kernels (views, copies, creation) are counted",
                 kernels_of);
  }
  if (command.check_ops) {
    for (uint32_t g : *file->program().entry_points()) {
      const std::string name = file->program().graphs()->Get(g)->name()->str();
      auto targets = exec::missing_kernels(file->program(), name, *device);
      if (!targets) {
        spdlog::error("{}", printable(targets.error().to_string()));
        return exit_status_for(targets.error());
      }
      any_missing = any_missing || !targets->empty();
      missing.emplace_back(name, std::move(*targets));
    }
  }
  // A DTensor program: the ops its sharded run computes whole, for want of a sharding rule.
  std::optional<dist::ShardingResult> sharding;
  std::vector<const dist::PlannedNodeSharding*> replicated;
  if (command.check_ops && dist::is_dtensor_program(file->program())) {
    auto planned = dist::shard_for_rank(file->program(), {0, dist::mesh_world_size(file->program()), "", true});
    if (!planned) {
      spdlog::error("{}", printable(planned.error().to_string()));
      return exit_status_for(planned.error());
    }
    sharding = std::move(*planned);
    replicated = dist::replicated_nodes(*sharding);
  }
  if (command.json) {
    json out = program_summary_json(summary);
    if (sharding) {
      json ops = json::array();
      for (const auto* n : replicated) ops.push_back({{"node", n->node}, {"target", n->target}});
      out["replicated_ops"] = ops;
    }
    if (command.check_ops) {
      json ops = json::object();
      for (const auto& [name, targets] : missing) ops[name] = targets;
      out["missing_kernels"] = ops;
    }
    std::cout << out.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
  } else {
    print_text(std::cout, summary, style);
    for (const auto& [name, targets] : missing) {
      if (targets.empty()) {
        std::cout << "ops of " << printable(name) << ": " << style.green("every target has a " + kernels_of + " kernel") << "\n";
        continue;
      }
      std::cout << "ops of " << printable(name) << ": " << style.red(std::to_string(targets.size()) + " without a " + kernels_of + " kernel")
                << "\n";
      for (const auto& t : targets) std::cout << "  " << printable(t) << "\n";
    }
    if (sharding && replicated.empty()) {
      std::cout << "sharded run: " << style.green("every op with sharded inputs keeps its shards") << "\n";
    } else if (sharding) {
      std::cout << "sharded run: " << replicated.size()
                << " op(s) run replicated (no rule keeps their shards: inputs gathered, computed whole):\n";
      for (const auto* n : replicated) std::cout << "  " << printable(n->node) << " (" << printable(n->target) << ")\n";
    }
  }
  std::cout.flush();
  if (!std::cout) {
    spdlog::error("cannot write to stdout");
    return kExitUsage;
  }
  return any_missing ? kExitInvalid : kExitOk;
}

}  // namespace nrt::cli
