#include "executor/runtime/constant_nodes.h"

#include <algorithm>
#include <array>
#include <string_view>

namespace nrt::exec {
namespace {

// Draws the op facts table does not list (nrt has no kernels for them today): kept out by name,
// so that a kernel added later cannot be folded into one draw for every run.
bool is_unlisted_draw(std::string_view target) {
  constexpr std::array<std::string_view, 8> kDraws = {"aten::multinomial", "aten::randperm", "aten::poisson",
                                                      "aten::exponential", "aten::geometric", "aten::cauchy",
                                                      "aten::log_normal", "aten::rrelu"};
  for (std::string_view draw : kDraws) {
    if (target.substr(0, draw.size()) == draw) return true;
  }
  return false;
}

bool may_fold_target(const PlannedNode& node) {
  if (node.target.rfind("aten::", 0) != 0 || node.collective || node.random_stream || node.in_place) return false;
  const OpFacts* facts = op_facts(node.target);
  if (facts != nullptr && (facts->seeded_draw || facts->collective)) return false;
  return !is_unlisted_draw(node.target);
}

// The values a node defines: its outputs' values and list elements.
std::vector<int32_t> defined_values(const PlannedNode& node) {
  std::vector<int32_t> defined;
  for (const PlannedOutput& out : node.outputs) {
    if (out.kind == OutputSlotKind::kValue) defined.push_back(out.value);
    if (out.kind == OutputSlotKind::kList) defined.insert(defined.end(), out.elements.begin(), out.elements.end());
  }
  return defined;
}

bool has_literal_sizes(const ValueInfo& info) {
  for (const PlannedDim& dim : info.sizes) {
    if (!dim.expr.empty()) return false;
  }
  return true;
}

}  // namespace

ConstantNodes find_constant_nodes(const ExecutionPlan& plan) {
  const size_t num_nodes = plan.nodes.size();
  ConstantNodes result;
  result.node_is_constant.assign(num_nodes, false);
  result.kept_values.assign(num_nodes, {});

  std::vector<int32_t> value_of_slot(static_cast<size_t>(plan.num_slots), -1);
  for (size_t v = 0; v < plan.values.size(); ++v) {
    const int32_t slot = plan.values[v].slot;
    if (slot >= 0 && slot < plan.num_slots) value_of_slot[static_cast<size_t>(slot)] = static_cast<int32_t>(v);
  }
  // Slots every run starts with: literals (but subgraphs), and the values of unmutated weights.
  std::vector<bool> constant_slot(static_cast<size_t>(plan.num_slots), false);
  for (const ConstantSlot& constant : plan.constants) {
    if (constant.slot >= 0 && constant.slot < plan.num_slots && !std::holds_alternative<GraphRef>(constant.value)) {
      constant_slot[static_cast<size_t>(constant.slot)] = true;
    }
  }
  std::vector<bool> constant_value(plan.values.size(), false);
  for (const PlannedInput& input : plan.inputs) {
    const bool weight = input.kind == fb::InputKind::PARAMETER || input.kind == fb::InputKind::BUFFER ||
                        input.kind == fb::InputKind::TENSOR_CONSTANT || input.kind == fb::InputKind::CONSTANT_INPUT;
    if (!weight || input.value < 0) continue;
    const ValueInfo& info = plan.values[static_cast<size_t>(input.value)];
    if (!info.mutated_in_place) constant_value[static_cast<size_t>(input.value)] = true;
  }
  // Values some node writes into in place, with the memory they may alias.
  std::vector<bool> written(plan.values.size(), false);
  for (const PlannedNode& node : plan.nodes) {
    if (!node.in_place) continue;
    const int32_t slot = node.in_place->target_slot;
    const int32_t target = slot >= 0 && slot < plan.num_slots ? value_of_slot[static_cast<size_t>(slot)] : -1;
    if (target < 0) continue;
    written[static_cast<size_t>(target)] = true;
    for (int32_t root : plan.values[static_cast<size_t>(target)].alias_roots) written[static_cast<size_t>(root)] = true;
  }

  auto slot_is_constant = [&](int32_t slot) {
    if (slot < 0) return true;  // an argument left out
    if (slot >= plan.num_slots) return false;
    if (constant_slot[static_cast<size_t>(slot)]) return true;
    const int32_t value = value_of_slot[static_cast<size_t>(slot)];
    return value >= 0 && constant_value[static_cast<size_t>(value)];
  };

  for (size_t n = 0; n < num_nodes; ++n) {
    const PlannedNode& node = plan.nodes[n];
    if (!may_fold_target(node)) continue;
    bool reads_constants = true;
    for (const GatherStep& gather : node.gathers) {
      for (const GatherStep::Item& item : gather.items) reads_constants = reads_constants && slot_is_constant(item.slot);
    }
    for (int32_t slot : node.arg_slots) {
      // A list's slot is built from its items (read above) right before the call.
      const bool gathered = std::any_of(node.gathers.begin(), node.gathers.end(),
                                        [slot](const GatherStep& g) { return g.target_slot == slot; });
      if (!gathered) reads_constants = reads_constants && slot_is_constant(slot);
    }
    if (!reads_constants) continue;
    bool defines_constants = true;
    const std::vector<int32_t> defined = defined_values(node);
    for (int32_t v : defined) {
      const ValueInfo& info = plan.values[static_cast<size_t>(v)];
      if (written[static_cast<size_t>(v)] || (info.has_meta && !has_literal_sizes(info))) defines_constants = false;
    }
    if (!defines_constants) continue;
    result.node_is_constant[n] = true;
    ++result.count;
    for (int32_t v : defined) constant_value[static_cast<size_t>(v)] = true;
  }

  // What later runs need of them: the constant values a non-constant node or an output reads.
  std::vector<int32_t> defining_node(plan.values.size(), -1);
  for (size_t n = 0; n < num_nodes; ++n) {
    if (!result.node_is_constant[n]) continue;
    for (int32_t v : defined_values(plan.nodes[n])) defining_node[static_cast<size_t>(v)] = static_cast<int32_t>(n);
  }
  std::vector<bool> kept(plan.values.size(), false);
  auto keep_slot = [&](int32_t slot) {
    if (slot < 0 || slot >= plan.num_slots) return;
    const int32_t v = value_of_slot[static_cast<size_t>(slot)];
    if (v < 0 || kept[static_cast<size_t>(v)] || defining_node[static_cast<size_t>(v)] < 0) return;
    kept[static_cast<size_t>(v)] = true;
    result.kept_values[static_cast<size_t>(defining_node[static_cast<size_t>(v)])].push_back(v);
  };
  for (size_t n = 0; n < num_nodes; ++n) {
    if (result.node_is_constant[n]) continue;
    const PlannedNode& node = plan.nodes[n];
    for (int32_t slot : node.arg_slots) keep_slot(slot);
    for (const GatherStep& gather : node.gathers) {
      for (const GatherStep::Item& item : gather.items) keep_slot(item.slot);
    }
    if (node.in_place) keep_slot(node.in_place->target_slot);
  }
  for (const PlannedGraphOutput& out : plan.outputs) {
    if (out.value >= 0) keep_slot(plan.values[static_cast<size_t>(out.value)].slot);
  }
  return result;
}

}  // namespace nrt::exec
