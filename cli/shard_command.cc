#include "cli/shard_command.h"

#include <spdlog/spdlog.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <nlohmann/json.hpp>

#include "cli/exit_status.h"
#include "cli/flag_checks.h"
#include "cli/program_input.h"
#include "executor/dtensor/shard_plan.h"
#include "executor/dtensor/sharding_pass.h"
#include "serializer/program_text.h"
#include "serializer/read_file.h"
#include "serializer/write_program.h"

namespace nrt::cli {
namespace {

int report(const Error& e) {
  spdlog::error("{}", printable(e.to_string()));
  return exit_status_for(e);
}

bool same_file(const std::string& a, const std::string& b) {
  std::error_code ec;
  if (std::filesystem::equivalent(a, b, ec)) return true;
  const auto ca = std::filesystem::weakly_canonical(a, ec);
  if (ec) return false;
  const auto cb = std::filesystem::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

// -o must be a .nrt the command may write: not JSON (shard writes the binary container only), not
// the input program or the plan it reads (issue 25, class 5).
std::optional<Error> output_problem(const ShardCommand& command) {
  const std::string& out = command.out_path;
  if (same_file(out, command.in_path)) {
    return make_error(ErrorCode::InvalidArgument, "-o " + out + " is the input program; write the sharded program elsewhere");
  }
  if (same_file(out, command.plan_path)) {
    return make_error(ErrorCode::InvalidArgument, "-o " + out + " is the plan; write the sharded program elsewhere");
  }
  if (out.size() >= 5 && out.compare(out.size() - 5, 5, ".json") == 0) {
    return make_error(ErrorCode::InvalidArgument, "-o " + out +
                                                      ": shard writes a binary .nrt; write that, then `nrt-inspect "
                                                      "convert` it to .nrt.json");
  }
  return std::nullopt;
}

}  // namespace

CLI::App* add_shard_command(CLI::App& app, ShardCommand& command) {
  CLI::App* sub = app.add_subcommand("shard", "Make a DTensor program of a program by a sharding plan (PLAN.json)");
  sub->footer(
      "PLAN.json: {\"mesh\": {\"shape\": [2], \"dim_names\": [\"tp\"]}, \"modules\": {\"fc1\": \"colwise\", "
      "\"fc2\": \"rowwise\"}, \"parameters\": {FQN: [PLACEMENT, ...]}, \"inputs\": {NAME: [...]}, "
      "\"outputs\": {NAME or \"*\": [...]}}; placements as torch prints them (Shard(d), Replicate(), "
      "Partial(sum), _StridedShard(dim=d, sf=k)), one per mesh dim. Unlisted parameters and inputs stay "
      "Replicate; outputs default to Replicate. Run the result with mpirun -np <mesh size> nrt-run "
      "(docs/DISTRIBUTED.md).");
  sub->add_option("input", command.in_path, "Input program (.nrt, .nrt.json, .pt2, torch.export JSON)")->required();
  sub->add_option("--plan", command.plan_path, "The sharding plan (JSON)")->required();
  sub->add_option("-o,--output", command.out_path, "Output .nrt, replaced atomically (not .json, not the input or the plan)")
      ->required();
  return sub;
}

int run_shard_command(const ShardCommand& command) {
  if (auto problem = output_problem(command)) return report(*problem);
  auto file = open_program_input(command.in_path, {});
  if (!file) return report(file.error());
  auto text = read_file(command.plan_path, 1 << 24);
  if (!text) return report(text.error());
  auto plan = dist::parse_shard_plan(*text);
  // The plan's errors carry its path; the exit status is the code's, as for every command
  // (cli/exit_status.h: NRT-E104, a bad argument, exits 2 here as in `plan` and nrt-run).
  auto invalid = [&](const Error& e) { return report(make_error(e.code, command.plan_path + ": " + e.message)); };
  if (!plan) return invalid(plan.error());
  auto program = dist::apply_shard_plan(file->program(), *plan);
  if (!program) return invalid(program.error());
  std::vector<std::span<const uint8_t>> storages;
  for (uint32_t i = 0; i < program->storages.size(); ++i) storages.push_back(file->storage_bytes(i));
  if (Status s = write_program_file(command.out_path, std::move(*program), storages); !s) return report(s.error());
  if (auto check = ProgramFile::open(command.out_path); !check) return report(check.error());
  spdlog::info("wrote {}", command.out_path);
  return kExitOk;
}

CLI::App* add_plan_command(CLI::App& app, PlanCommand& command) {
  CLI::App* sub = app.add_subcommand("plan", "Show how a DTensor program runs sharded: per node its rule, placements "
                                             "and the redistributions inserted, with their collectives");
  sub->add_option("file", command.path, "DTensor program")->required();
  sub->add_option("--rank", command.rank, "The rank whose local sizes are planned (default 0)")
      ->check(integer_in(0, INT32_MAX));
  sub->add_flag("--json", command.json, "Print JSON");
  return sub;
}

int run_plan_command(const PlanCommand& command) {
  auto file = open_program_input(command.path, {});
  if (!file) return report(file.error());
  if (!dist::is_dtensor_program(file->program())) {
    return report(make_error(ErrorCode::InvalidArgument, command.path + ": not a DTensor program (no mesh or DTensor value)"));
  }
  // The world is the mesh's: the plan is the one mpirun -np <mesh size> runs.
  const int world = dist::mesh_world_size(file->program());
  auto result = dist::shard_for_rank(file->program(), {command.rank, world, "", true});
  if (!result) return report(result.error());
  auto step_json = [](const dist::PlannedStep& s) {
    return nlohmann::json{{"value", s.value}, {"mesh_dim", s.mesh_dim}, {"from", dist::to_string(s.from)},
                          {"to", dist::to_string(s.to)}, {"collective", s.collective}};
  };
  auto step_text = [](const dist::PlannedStep& s) {
    return "    redistribute " + s.value + " on mesh dim " + std::to_string(s.mesh_dim) + ": " + dist::to_string(s.from) +
           " -> " + dist::to_string(s.to) + " (" + s.collective + ")\n";
  };
  if (command.json) {
    nlohmann::json out{{"mesh", result->mesh.shape}, {"rank", command.rank}, {"coordinate", result->coordinate}};
    out["nodes"] = nlohmann::json::array();
    for (const auto& n : result->nodes) {
      nlohmann::json node{{"node", n.node}, {"target", n.target}, {"rule", n.rule}, {"output", dist::to_string(n.output)}};
      node["inputs"] = nlohmann::json::array();
      for (const auto& p : n.inputs) node["inputs"].push_back(dist::to_string(p));
      node["steps"] = nlohmann::json::array();
      for (const auto& s : n.steps) node["steps"].push_back(step_json(s));
      for (const auto& s : n.output_steps) node["steps"].push_back(step_json(s));
      node["exchanges"] = nlohmann::json::array();
      for (const auto& s : n.exchanges) node["exchanges"].push_back(step_json(s));
      out["nodes"].push_back(std::move(node));
    }
    out["output_steps"] = nlohmann::json::array();
    for (const auto& s : result->final_steps) out["output_steps"].push_back(step_json(s));
    std::cout << out.dump(2) << "\n";
    return kExitOk;
  }
  std::string text = "mesh '" + result->mesh.name + "' [";
  for (size_t i = 0; i < result->mesh.shape.size(); ++i) text += (i ? ", " : "") + std::to_string(result->mesh.shape[i]);
  text += "], rank " + std::to_string(command.rank) + "\n";
  for (const auto& n : result->nodes) {
    for (const auto& s : n.steps) text += step_text(s);
    std::string inputs;
    for (const auto& p : n.inputs) inputs += (inputs.empty() ? "" : ", ") + dist::to_string(p);
    text += "  " + n.node + " (" + n.target + "): " + n.rule + ", inputs " + inputs + " -> " + dist::to_string(n.output) + "\n";
    for (const auto& s : n.exchanges) {
      text += "    exchange of (value, index) pairs of " + s.value + " on mesh dim " + std::to_string(s.mesh_dim) +
              " (" + s.collective + ")\n";
    }
    for (const auto& s : n.output_steps) text += step_text(s);
  }
  for (const auto& s : result->final_steps) text += "  output:\n" + step_text(s);
  // Line by line: printable() escapes the newlines of a whole text.
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    std::cout << printable(text.substr(start, end - start)) << "\n";
    start = end + 1;
  }
  return kExitOk;
}

}  // namespace nrt::cli
