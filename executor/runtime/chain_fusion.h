// What the fusions of op chains share (rms_norm_fusion.h, rotary_fusion.h): reading a planned
// node's arguments and constants, counting a value's readers, and rewriting a matched chain: its
// first node gets the fused kernel, the nodes between do nothing (fused_chains.h's absorbed
// kernel: no arguments, results neither planned nor made) and its last node becomes a view
// (aten::alias) of the first's result.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Node `n` becomes a view (aten::alias) of the value in `input_slot`, whose memory is `base`'s: its
// result is no longer planned, an in-place node's scratch neither, outputs after the first (unread
// statistics) are no longer made, and the result, and every view of it, views base's roots (base
// itself where base views nothing). The convolution fusion's absorbed nodes and a chain's last node.
void make_alias_view(ExecutionPlan& plan, const KernelInfo& alias, size_t n, int32_t input_slot, int32_t base);

// Node `n` runs `absorbed` (fused_chains.h's kAbsorbedTarget: another node did its work): no
// arguments, its results neither planned nor made.
void make_absorbed(ExecutionPlan& plan, const KernelInfo& absorbed, size_t n);

// A new slot holding the constant `value`: an argument a fusion gives a node.
int32_t add_constant_slot(ExecutionPlan& plan, RuntimeValue value);

// Whether a node in [first, last) writes in place: a rewrite that moves a read past them may not.
bool writes_in_place_between(const ExecutionPlan& plan, size_t first, size_t last);

class ChainFusion {
 public:
  // False where the device lacks the absorbed kernel, `fused_target` or a view alias: nothing fuses.
  ChainFusion(ExecutionPlan& plan, const KernelRegistry& registry, std::string_view fused_target);
  bool ready() const { return ready_; }

 protected:
  // The slot of the argument called `name`, or -1 where the node lacks it.
  static int32_t argument(const PlannedNode& node, std::string_view name);
  // The constant in `slot`, or null (no constant there).
  const RuntimeValue* constant(int32_t slot) const;
  // The number (int or float) constant in `slot`.
  std::optional<double> number(int32_t slot) const;
  // The int list constant in `slot`, or null.
  const std::vector<int64_t>* int_list(int32_t slot) const;
  // `node`'s memory_format argument is absent, None or `format`.
  bool memory_format_is(const PlannedNode& node, MemoryFormat format) const;
  // The value `slot` holds, or null (a constant, or nothing).
  const ValueInfo* value_in(int32_t slot) const;
  // The index of the value `slot` holds, or -1.
  int32_t value_of(int32_t slot) const { return slot < 0 ? -1 : value_of_slot_[static_cast<size_t>(slot)]; }
  int32_t slot_of(int32_t value) const { return plan_.values[static_cast<size_t>(value)].slot; }
  // `value` is read exactly `times` times: by arguments, list items and graph outputs together.
  bool read_only(int32_t value, int times) const { return reads_[static_cast<size_t>(slot_of(value))] == times; }
  static bool same_dim(const PlannedDim& a, const PlannedDim& b);
  static bool same_sizes(const ValueInfo& a, const ValueInfo& b);
  // `target`'s kernel on this device is nrt's own: registered from the directory of the fused
  // kernel's source (a kernel library that replaced it is obeyed).
  bool builtin(std::string_view target) const;
  // Node `n` is `target` with nrt's own kernel, no list arguments and no in-place write, and has
  // one float32 tensor result, whose value it returns (else -1).
  int32_t plain_node(size_t n, std::string_view target) const;
  // A plain binary `target` node at `n` (mul.Tensor, add.Tensor without alpha) reading `slot` as
  // one operand: the other operand's slot, or -1.
  int32_t partner(size_t n, std::string_view target, int32_t slot) const;

  // The rewrite: node `first` runs the fused kernel on `arguments` (names and slots), nodes
  // (first, last) do nothing, and node `last` becomes a view of first's result.
  void fuse(size_t first, size_t last, const std::vector<std::pair<std::string_view, int32_t>>& arguments);
  // Node `n` runs the fused kernel on `arguments`, its results as they were.
  void run_fused(size_t n, const std::vector<std::pair<std::string_view, int32_t>>& arguments);
  // Node `n` becomes a view (aten::alias) of the value in `input_slot`.
  void become_view(size_t n, int32_t input_slot) { make_alias_view(plan_, alias_, n, input_slot, value_of(input_slot)); }
  // Node `n` does nothing: another node does its work.
  void absorb(size_t n) { make_absorbed(plan_, absorbed_, n); }
  // A new slot holding `value`, read once.
  int32_t constant_slot(RuntimeValue value);
  // `value` is read at node `n` now: its memory lives until then.
  void read_at(int32_t value, size_t n);

  ExecutionPlan& plan_;
  const KernelRegistry& registry_;

 private:
  void index_slots();

  bool ready_ = false;
  KernelInfo fused_, absorbed_, alias_;
  std::string kernels_directory_;  // of the fused kernel's source, with its final '/'

  std::vector<int32_t> value_of_slot_, constant_of_slot_;
  std::vector<int> reads_;
};

}  // namespace nrt::exec
