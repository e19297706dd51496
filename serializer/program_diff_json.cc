#include "serializer/program_diff_json.h"

namespace nrt {

nlohmann::ordered_json program_diff_json(const ProgramDiff& d) {
  nlohmann::ordered_json graphs = nlohmann::ordered_json::array();
  for (const auto& g : d.graphs) {
    nlohmann::ordered_json changed = nlohmann::ordered_json::array();
    for (const auto& c : g.changed_nodes) changed.push_back({{"a", c.a_node}, {"b", c.b_node}, {"changes", c.changes}});
    graphs.push_back({{"name", g.name},
                      {"removed_nodes", g.removed_nodes},
                      {"added_nodes", g.added_nodes},
                      {"changed_nodes", changed},
                      {"interface_changes", g.interface_changes}});
  }
  nlohmann::ordered_json weights = nlohmann::ordered_json::array();
  for (const auto& w : d.weights) {
    nlohmann::ordered_json entry = {{"fqn", w.fqn}, {"change", w.change}};
    entry["max_abs_diff"] = w.max_abs_diff ? nlohmann::ordered_json(*w.max_abs_diff) : nlohmann::ordered_json(nullptr);
    weights.push_back(entry);
  }
  return {{"same", d.same()},
          {"graphs_removed", d.graphs_removed},
          {"graphs_added", d.graphs_added},
          {"graphs", graphs},
          {"mesh_changes", d.mesh_changes},
          {"group_changes", d.group_changes},
          {"weights", weights}};
}

}  // namespace nrt
