#include "executor/comm/collective_schedule.h"

#include <cstdio>
#include <string_view>

#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

constexpr std::string_view kCollectives = "_c10d_functional::";

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

std::string entry(const fb::Program& program, const fb::Graph& graph, const fb::Node& node, const std::string& target) {
  std::string group, reduce, dtypes;
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
    } else if (std::string dtype = tensor_dtype(graph, *named); !dtype.empty()) {
      dtypes += (dtypes.empty() ? "" : ",") + dtype;
    }
  }
  std::string text = target + " group=" + (group.empty() ? "?" : group);
  if (!reduce.empty()) text += " reduce=" + reduce;
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
      if (!target.starts_with(kCollectives) || target.starts_with("_c10d_functional::wait_tensor")) continue;
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

}  // namespace nrt::exec
