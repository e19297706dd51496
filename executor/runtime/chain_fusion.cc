#include "executor/runtime/chain_fusion.h"

#include <algorithm>
#include <string>
#include <utility>

#include "executor/runtime/fused_chains.h"

namespace nrt::exec {

ChainFusion::ChainFusion(ExecutionPlan& plan, const KernelRegistry& registry, std::string_view fused_target)
    : plan_(plan), registry_(registry) {
  const KernelInfo* fused = registry_.find(fused_target, plan_.device.kind);
  const KernelInfo* absorbed = registry_.find(fused_chains::kAbsorbedTarget, plan_.device.kind);
  const KernelInfo* alias = registry_.find("aten::alias.default", plan_.device.kind);
  if (fused == nullptr || absorbed == nullptr || alias == nullptr || !alias->is_view) return;
  fused_ = *fused;
  absorbed_ = *absorbed;
  alias_ = *alias;
  const std::string origin = registry_.origin(fused_target, plan_.device.kind);
  kernels_directory_ = origin.substr(0, origin.rfind('/') + 1);
  index_slots();
  ready_ = true;
}

void ChainFusion::index_slots() {
  const auto slots = static_cast<size_t>(plan_.num_slots);
  value_of_slot_.assign(slots, -1);
  constant_of_slot_.assign(slots, -1);
  reads_.assign(slots, 0);
  for (size_t v = 0; v < plan_.values.size(); ++v) {
    const int32_t slot = plan_.values[v].slot;
    if (slot >= 0) value_of_slot_[static_cast<size_t>(slot)] = static_cast<int32_t>(v);
  }
  for (size_t c = 0; c < plan_.constants.size(); ++c) {
    constant_of_slot_[static_cast<size_t>(plan_.constants[c].slot)] = static_cast<int32_t>(c);
  }
  auto count = [&](int32_t slot) {
    if (slot >= 0) ++reads_[static_cast<size_t>(slot)];
  };
  for (const PlannedNode& node : plan_.nodes) {
    for (int32_t slot : node.arg_slots) count(slot);
    for (const GatherStep& gather : node.gathers) {
      for (const auto& item : gather.items) count(item.slot);
    }
  }
  for (const PlannedGraphOutput& out : plan_.outputs) {
    if (out.value >= 0) count(plan_.values[static_cast<size_t>(out.value)].slot);
  }
}

int32_t ChainFusion::argument(const PlannedNode& node, std::string_view name) {
  for (size_t i = 0; i < node.arg_names.size(); ++i) {
    if (node.arg_names[i] == name) return node.arg_slots[i];
  }
  return -1;
}

const RuntimeValue* ChainFusion::constant(int32_t slot) const {
  if (slot < 0 || constant_of_slot_[static_cast<size_t>(slot)] < 0) return nullptr;
  return &plan_.constants[static_cast<size_t>(constant_of_slot_[static_cast<size_t>(slot)])].value;
}

std::optional<double> ChainFusion::number(int32_t slot) const {
  const RuntimeValue* c = constant(slot);
  if (c == nullptr) return std::nullopt;
  if (const auto* d = std::get_if<double>(c)) return *d;
  if (const auto* i = std::get_if<int64_t>(c)) return static_cast<double>(*i);
  return std::nullopt;
}

const std::vector<int64_t>* ChainFusion::int_list(int32_t slot) const {
  const RuntimeValue* c = constant(slot);
  return c != nullptr ? std::get_if<std::vector<int64_t>>(c) : nullptr;
}

bool ChainFusion::memory_format_is(const PlannedNode& node, MemoryFormat format) const {
  const int32_t slot = argument(node, "memory_format");
  if (slot < 0) return true;
  const RuntimeValue* given = constant(slot);
  if (given == nullptr) return false;
  const auto* named = std::get_if<MemoryFormat>(given);
  return std::holds_alternative<std::monostate>(*given) || (named != nullptr && *named == format);
}

const ValueInfo* ChainFusion::value_in(int32_t slot) const {
  if (slot < 0 || value_of_slot_[static_cast<size_t>(slot)] < 0) return nullptr;
  return &plan_.values[static_cast<size_t>(value_of_slot_[static_cast<size_t>(slot)])];
}

bool ChainFusion::same_dim(const PlannedDim& a, const PlannedDim& b) { return a.literal == b.literal && a.expr == b.expr; }

bool ChainFusion::same_sizes(const ValueInfo& a, const ValueInfo& b) {
  return a.sizes.size() == b.sizes.size() && std::equal(a.sizes.begin(), a.sizes.end(), b.sizes.begin(), same_dim);
}

bool ChainFusion::builtin(std::string_view target) const {
  const std::string origin = registry_.origin(target, plan_.device.kind);
  return !kernels_directory_.empty() && origin.rfind('/') + 1 == kernels_directory_.size() &&
         origin.starts_with(kernels_directory_);
}

int32_t ChainFusion::plain_node(size_t n, std::string_view target) const {
  if (n >= plan_.nodes.size()) return -1;
  const PlannedNode& node = plan_.nodes[n];
  if (node.target != target || node.in_place || !node.gathers.empty() || node.outputs.size() != 1 ||
      node.outputs[0].kind != OutputSlotKind::kValue || !builtin(target)) {
    return -1;
  }
  const ValueInfo& result = plan_.values[static_cast<size_t>(node.outputs[0].value)];
  if (result.kind != fb::ValueKind::TENSOR || result.dtype != ScalarType::FLOAT32) return -1;
  return node.outputs[0].value;
}

int32_t ChainFusion::partner(size_t n, std::string_view target, int32_t slot) const {
  if (plain_node(n, target) < 0) return -1;
  const PlannedNode& node = plan_.nodes[n];
  const int32_t self = argument(node, "self"), other = argument(node, "other");
  if (self < 0 || other < 0 || node.arg_slots.size() != 2) return -1;  // no alpha
  if (self == slot && other != slot) return other;
  if (other == slot && self != slot) return self;
  return -1;
}

void ChainFusion::run_fused(size_t n, const std::vector<std::pair<std::string_view, int32_t>>& arguments) {
  PlannedNode& node = plan_.nodes[n];
  node.kernel = fused_;
  node.arg_names.clear();
  node.arg_slots.clear();
  for (const auto& [name, slot] : arguments) {
    node.arg_names.emplace_back(name);
    node.arg_slots.push_back(slot);
  }
}

void ChainFusion::fuse(size_t first, size_t last, const std::vector<std::pair<std::string_view, int32_t>>& arguments) {
  run_fused(first, arguments);
  for (size_t b = first + 1; b < last; ++b) absorb(b);
  const int32_t head = plan_.nodes[first].outputs[0].value;
  make_alias_view(plan_, alias_, last, slot_of(head), head);
}

int32_t ChainFusion::constant_slot(RuntimeValue value) {
  const int32_t slot = add_constant_slot(plan_, std::move(value));
  value_of_slot_.push_back(-1);
  constant_of_slot_.push_back(static_cast<int32_t>(plan_.constants.size() - 1));
  reads_.push_back(1);
  return slot;
}

void ChainFusion::read_at(int32_t value, size_t n) {
  ValueInfo& info = plan_.values[static_cast<size_t>(value)];
  info.last_use = std::max(info.last_use, static_cast<int64_t>(n));
}

bool writes_in_place_between(const ExecutionPlan& plan, size_t first, size_t last) {
  for (size_t m = first; m < last; ++m) {
    if (plan.nodes[m].in_place) return true;
  }
  return false;
}

int32_t add_constant_slot(ExecutionPlan& plan, RuntimeValue value) {
  const int32_t slot = plan.num_slots++;
  plan.constants.push_back({slot, std::move(value)});
  return slot;
}

void make_absorbed(ExecutionPlan& plan, const KernelInfo& absorbed, size_t n) {
  PlannedNode& node = plan.nodes[n];
  node.kernel = absorbed;
  node.arg_names.clear();
  node.arg_slots.clear();
  node.gathers.clear();
  node.in_place.reset();
  for (PlannedOutput& out : node.outputs) {
    if (out.kind == OutputSlotKind::kValue) plan.values[static_cast<size_t>(out.value)].planned = false;
    out.kind = OutputSlotKind::kIgnored;
  }
}

void make_alias_view(ExecutionPlan& plan, const KernelInfo& alias, size_t n, int32_t input_slot, int32_t base) {
  PlannedNode& node = plan.nodes[n];
  if (node.in_place && node.in_place->scratch_value >= 0) {
    plan.values[static_cast<size_t>(node.in_place->scratch_value)].planned = false;
  }
  node.in_place.reset();
  node.kernel = alias;
  node.arg_names = {std::string()};
  node.arg_slots = {input_slot};
  node.gathers.clear();
  for (size_t o = 1; o < node.outputs.size(); ++o) {
    if (node.outputs[o].kind == OutputSlotKind::kValue) plan.values[static_cast<size_t>(node.outputs[o].value)].planned = false;
    node.outputs[o].kind = OutputSlotKind::kIgnored;
  }
  const std::vector<int32_t>& base_roots = plan.values[static_cast<size_t>(base)].alias_roots;
  const std::vector<int32_t> roots = base_roots.empty() ? std::vector<int32_t>{base} : base_roots;
  const int32_t view_index = node.outputs[0].value;
  ValueInfo& view = plan.values[static_cast<size_t>(view_index)];
  view.planned = false;
  for (ValueInfo& other : plan.values) {
    auto& other_roots = other.alias_roots;
    const auto at = std::find(other_roots.begin(), other_roots.end(), view_index);
    if (at == other_roots.end()) continue;
    other_roots.erase(at);
    other_roots.insert(other_roots.end(), roots.begin(), roots.end());
    std::sort(other_roots.begin(), other_roots.end());
    other_roots.erase(std::unique(other_roots.begin(), other_roots.end()), other_roots.end());
  }
  view.alias_roots = roots;
}

}  // namespace nrt::exec
