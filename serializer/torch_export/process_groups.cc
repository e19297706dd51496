#include "serializer/torch_export/process_groups.h"

#include <optional>
#include <string>
#include <unordered_map>

namespace nrt::torch_export {

bool is_functional_collective(const fb::OperatorT& op) {
  const std::string& name = op.name;
  return name.rfind("_c10d_functional::", 0) == 0 || name.rfind("_c10d_functional_autograd::", 0) == 0;
}

Status collect_process_groups(fb::ProgramT* program) {
  std::unordered_map<std::string, uint32_t> by_name;
  for (uint32_t g = 0; g < program->process_groups.size(); ++g) by_name.emplace(program->process_groups[g]->name, g);
  std::unordered_map<uint32_t, int64_t> sizes;  // group -> size stated by a collective

  for (const auto& graph : program->graphs) {
    for (const auto& node : graph->nodes) {
      if (node->op >= program->operators.size() || !is_functional_collective(*program->operators[node->op])) continue;
      std::optional<uint32_t> group;
      std::optional<int64_t> size;
      for (auto& input : node->inputs) {
        if (input->name == "group_name") {
          if (const auto* name = input->arg.AsStringArg()) {
            auto [it, added] = by_name.emplace(name->value, static_cast<uint32_t>(program->process_groups.size()));
            if (added) {
              program->process_groups.push_back(std::make_unique<fb::ProcessGroupT>());
              program->process_groups.back()->name = name->value;
            }
            fb::ProcessGroupArgT arg;
            arg.group = it->second;
            input->arg.Set(std::move(arg));
          }
          if (const auto* arg = input->arg.AsProcessGroupArg()) group = arg->group;
        } else if (input->name == "group_size") {
          if (const auto* arg = input->arg.AsIntArg()) size = arg->value;
        }
      }
      if (!group || !size) continue;
      const std::string& name = program->process_groups[*group]->name;
      if (*size < 1 || *size > (int64_t{1} << 24)) {
        return make_error(ErrorCode::InvalidProcessGroup, "graph '" + graph->name + "' node '" + node->name +
                                                              "': group_size " + std::to_string(*size) +
                                                              " for process group '" + name + "'");
      }
      auto [it, added] = sizes.emplace(*group, *size);
      if (!added && it->second != *size) {
        return make_error(ErrorCode::InvalidProcessGroup,
                          "graph '" + graph->name + "' node '" + node->name + "': process group '" + name +
                              "' has group_size " + std::to_string(*size) + " here but " + std::to_string(it->second) +
                              " elsewhere");
      }
    }
  }
  for (const auto& [group, size] : sizes) {
    auto& ranks = program->process_groups[group]->ranks;
    if (!ranks.empty()) continue;  // recorded by an earlier import
    for (int32_t r = 0; r < size; ++r) ranks.push_back(r);
  }
  return {};
}

}  // namespace nrt::torch_export
