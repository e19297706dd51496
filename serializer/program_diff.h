// Structural diff of two verified programs after canonical alignment. Graphs pair by name. Nodes
// pair first by equal structure digest (same computation on the same inputs), then by target and
// argument names, then by argument names alone (a changed target); what is left is added or
// removed. Value references compare through that pairing, so renamed values and reordered
// independent nodes are no difference, while a moved edge is. Weights pair by fqn; changed bytes
// report the largest absolute element difference.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "serializer/program_file.h"

namespace nrt {

struct NodeChange {
  std::string a_node;  // node names as printed by `print` (%name or #index)
  std::string b_node;
  std::vector<std::string> changes;  // "target: aten::relu.default -> aten::gelu.default", ...
};

struct GraphDiff {
  std::string name;
  std::vector<std::string> removed_nodes;  // "%name = target"
  std::vector<std::string> added_nodes;
  std::vector<NodeChange> changed_nodes;
  std::vector<std::string> interface_changes;  // inputs, outputs, signature specs
  bool empty() const {
    return removed_nodes.empty() && added_nodes.empty() && changed_nodes.empty() && interface_changes.empty();
  }
};

struct WeightChange {
  std::string fqn;
  std::string change;  // "added", "removed", "metadata: ...", "bytes"
  std::optional<double> max_abs_diff;  // numeric dtypes with changed bytes
};

struct ProgramDiff {
  std::vector<std::string> graphs_removed;
  std::vector<std::string> graphs_added;
  std::vector<GraphDiff> graphs;          // only graphs with differences
  std::vector<std::string> mesh_changes;  // by mesh name
  std::vector<std::string> group_changes; // by group name
  std::vector<WeightChange> weights;
  bool same() const {
    return graphs_removed.empty() && graphs_added.empty() && graphs.empty() && mesh_changes.empty() &&
           group_changes.empty() && weights.empty();
  }
};

ProgramDiff diff_programs(const ProgramFile& a, const ProgramFile& b);

}  // namespace nrt
