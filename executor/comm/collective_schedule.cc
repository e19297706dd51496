#include "executor/comm/collective_schedule.h"

#include <cstdio>
#include <string_view>

#include "core/schema_enums.h"
#include "executor/runtime/op_facts.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

std::string string_arg(const fb::NamedArgument& named) {
  if (named.arg_type() != fb::Argument::StringArg) return "";
  const auto* s = named.arg_as_StringArg()->value();
  return s ? s->str() : "";
}

// The dtype of a tensor argument (a list: its first element's), or "" for other arguments.
std::string tensor_dtype(const fb::Graph& graph, const fb::NamedArgument& named) {
  int64_t value = -1;
  if (named.arg_type() == fb::Argument::TensorArg) value = named.arg_as_TensorArg()->value();
  if (named.arg_type() == fb::Argument::TensorListArg) {
    const auto* values = named.arg_as_TensorListArg()->values();
    if (vector_size(values) > 0) value = values->Get(0);
  }
  if (value < 0 || value >= static_cast<int64_t>(vector_size(graph.values()))) return "";
  const auto* meta = graph.values()->Get(static_cast<uint32_t>(value))->tensor();
  return meta ? std::string(short_name(meta->dtype())) : "";
}

// A group a mesh defines, as "mesh <m> dim <d>": each rank of a 2-D mesh reduces over the group of
// its own coordinate (mesh.tp.0 on ranks 0 and 1, mesh.tp.1 on 2 and 3), and they all issue the same
// collective. Any other group by its name.
std::string mesh_group(const fb::Program& program, const std::string& name) {
  for (uint32_t g = 0; g < vector_size(program.process_groups()); ++g) {
    const auto* group = program.process_groups()->Get(g);
    if (group->name() && group->name()->str() == name && group->mesh() >= 0) {
      return "mesh " + std::to_string(group->mesh()) + " dim " + std::to_string(group->mesh_dim());
    }
  }
  return name;
}

std::string entry(const fb::Program& program, const fb::Graph& graph, const fb::Node& node, const std::string& target) {
  std::string group, reduce, dtypes, others;
  for (uint32_t i = 0; i < vector_size(node.inputs()); ++i) {
    const auto* named = node.inputs()->Get(i);
    const std::string_view name = named->name() ? named->name()->string_view() : std::string_view();
    if (named->arg_type() == fb::Argument::ProcessGroupArg) {
      const uint32_t g = named->arg_as_ProcessGroupArg()->group();
      if (g < vector_size(program.process_groups())) group = program.process_groups()->Get(g)->name()->str();
    } else if (name == "group_name" || name == "tag") {
      if (group.empty()) group = string_arg(*named);
    } else if (name == "reduce_op" || name == "reduceOp" || name == "op") {
      reduce = string_arg(*named);
    } else if (named->arg_type() == fb::Argument::StringArg) {
      others += " " + std::string(name) + "=" + string_arg(*named);  // e.g. a redistribution's from/to
    } else if (std::string dtype = tensor_dtype(graph, *named); !dtype.empty()) {
      dtypes += (dtypes.empty() ? "" : ",") + dtype;
    }
  }
  std::string text = target + " group=" + (group.empty() ? "?" : mesh_group(program, group));
  if (!reduce.empty()) text += " reduce=" + reduce;
  text += others;
  if (!dtypes.empty()) text += " " + dtypes;
  return text;
}

}  // namespace

std::vector<std::string> collective_schedule(const fb::Program& program) {
  std::vector<std::string> schedule;
  for (uint32_t g = 0; g < vector_size(program.graphs()); ++g) {
    const auto* graph = program.graphs()->Get(g);
    for (uint32_t n = 0; n < vector_size(graph->nodes()); ++n) {
      const auto* node = graph->nodes()->Get(n);
      if (node->op() >= vector_size(program.operators())) continue;
      const std::string target = operator_target(*program.operators()->Get(node->op()));
      const OpFacts* facts = op_facts(target);
      if (facts == nullptr || !facts->collective || facts->waits) continue;
      schedule.push_back(entry(program, *graph, *node, target));
    }
  }
  return schedule;
}

std::string collective_schedule_line(const std::vector<std::string>& schedule) {
  // FNV-1a over the entries and their lengths: the same on every rank and host.
  uint64_t hash = 0xcbf29ce484222325ull;
  auto mix = [&hash](std::string_view bytes) {
    for (unsigned char c : bytes) hash = (hash ^ c) * 0x100000001b3ull;
  };
  std::string shown;
  for (const std::string& e : schedule) {
    mix(std::to_string(e.size()) + ":");
    mix(e);
    if (shown.size() < 240) shown += (shown.empty() ? "" : "; ") + e;
  }
  if (shown.size() >= 240) shown = shown.substr(0, 240) + "...";
  char digest[17];
  std::snprintf(digest, sizeof digest, "%016llx", static_cast<unsigned long long>(hash));
  return std::to_string(schedule.size()) + " collective" + (schedule.size() == 1 ? "" : "s") + ", digest " + digest +
         (shown.empty() ? "" : ": " + shown);
}

std::string process_groups_line(const fb::Program& program) {
  std::string line;
  for (uint32_t g = 0; g < vector_size(program.process_groups()); ++g) {
    const auto* group = program.process_groups()->Get(g);
    line += (line.empty() ? "" : "; ") + (group->name() ? group->name()->str() : "?") + " ranks=[";
    for (uint32_t r = 0; r < vector_size(group->ranks()); ++r) line += (r ? ", " : "") + std::to_string(group->ranks()->Get(r));
    line += "]";
    if (group->mesh() >= 0) line += " mesh=" + std::to_string(group->mesh()) + "/" + std::to_string(group->mesh_dim());
  }
  return line.empty() ? "none" : line;
}

}  // namespace nrt::exec
