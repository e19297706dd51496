// Nodes whose results are the same on every run: they read only the program's weights and
// literals (and each other), never a user input. A language model's causal mask and rotary
// tables are built this way (arange, cumsum, index, comparisons, cos and sin of the positions):
// a third of a small Llama's nodes. The executor runs them in a frame's first run, keeps the
// values later nodes read from them, and skips them afterwards (executor.h).
//
// A node is constant when, besides reading only constants:
//  - it is an aten op (a custom library's op may have effects nrt cannot see);
//  - it draws no random numbers (a seeded draw differs per run) and communicates with no group;
//  - it passes no subgraph (control flow) and writes nothing in place (nor out=);
//  - every tensor it defines has literal sizes (symbolic sizes change with the inputs);
//  - nothing it defines, nor anything that memory aliases, is written in place by a later node.
// Weights the graph mutates in place (ValueInfo::mutated_in_place) are not constants.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime/execution_plan.h"

namespace nrt::exec {

struct ConstantNodes {
  std::vector<bool> node_is_constant;  // by node index
  // By node index: the values it defines that a non-constant node or a graph output reads; a
  // frame keeps them after the node's first run.
  std::vector<std::vector<int32_t>> kept_values;
  size_t count = 0;  // constant nodes
};

ConstantNodes find_constant_nodes(const ExecutionPlan& plan);

}  // namespace nrt::exec
