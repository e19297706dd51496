// The mutable state of running one ExecutionPlan: a table of RuntimeValue slots (graph values,
// constants, gathered lists, output scratch), each node's argument list pointing into it, one
// arena holding every planned tensor at its planned offset, and what the executor keeps per run
// (the slots the caller's inputs went into, the compact loop's placement cache, owned copies of
// the weights the graph mutates). The plan is only read: frames of one plan run concurrently.
//
// A frame is reused across runs. `prepare` plans memory for the concrete sizes the symbols are
// bound to; when they are the same as last time (always, for static shapes) it does nothing, so a
// second run allocates no memory. When sizes change, memory is re-planned and the arena grows if
// it must (it never shrinks). Values whose size stays unknown (a dimension the bindings cannot
// evaluate) get no planned memory: their kernel allocates.
//
// Poisoning (`FrameOptions::poison_freed`, or NRT_POISON_FREED=1 in the environment): when a
// planned value's lifetime ends, its bytes are overwritten — NaN for floating dtypes, 0xA5
// bytes otherwise — so that a read after the lifetime shows up as a wrong result.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/memory_planner.h"
#include "executor/comm/pending_collectives.h"
#include "executor/runtime/sym_expr.h"

namespace nrt::exec {

struct FrameOptions {
  bool poison_freed = false;
};

// NRT_POISON_FREED read as every NRT_* switch is (core/number_text.h): unset is false, 0 or 1
// otherwise; any other value (empty included) is an InvalidArgument naming the variable.
Result<bool> poison_requested_by_environment();

// Fills `bytes` bytes at `data` with the poison pattern of `dtype`.
void poison_bytes(uint8_t* data, size_t bytes, ScalarType dtype);

class ExecutionFrame {
 public:
  ExecutionFrame(const ExecutionPlan& plan, FrameOptions options);
  ExecutionFrame(const ExecutionFrame&) = delete;
  ExecutionFrame& operator=(const ExecutionFrame&) = delete;

  Status prepare(const SymbolBindings& bindings);

  std::vector<RuntimeValue>& slots() { return slots_; }
  const std::vector<RuntimeValue>& slots() const { return slots_; }
  std::span<const NamedValue> arguments(size_t node) const {
    return std::span<const NamedValue>(arguments_.data() + argument_begin_[node],
                                       argument_begin_[node + 1] - argument_begin_[node]);
  }

  // The tensor a planned value is written into, or nullptr when the value has no planned memory.
  const Tensor* planned_tensor(size_t value) const {
    return planned_[value].defined() ? &planned_[value] : nullptr;
  }
  // The frame's cell for `value`'s planned tensor (undefined when it has none). Its address is
  // stable for the frame's life, so callers may keep it across runs and re-plans.
  const Tensor& planned_cell(size_t value) const { return planned_[value]; }
  // Changes whenever `prepare` plans memory anew (never 0 after the first plan).
  uint64_t plan_generation() const { return plan_generation_; }
  // Concrete sizes of a tensor value under the current bindings; nullptr when unknown.
  const std::vector<int64_t>* concrete_sizes(size_t value) const {
    return sizes_known_[value] ? &sizes_[value] : nullptr;
  }
  bool is_arena(const Storage* storage) const { return storage != nullptr && storage == arena_.get(); }
  bool in_arena(const uint8_t* p) const {
    return arena_ != nullptr && p >= arena_->data() && p < arena_->data() + arena_->bytes();
  }

  // Called when `value`'s lifetime ends: poisons its planned bytes (when enabled).
  void end_lifetime(size_t value);
  bool poisoning() const { return options_.poison_freed; }

  // Node n's slot for what its kernel keeps between runs in this frame (kernel_state.h), and what
  // it holds (nullptr: nothing).
  KernelStateSlot* kernel_state(size_t node) { return &kernel_states_[node]; }
  const KernelState* kept_state(size_t node) const { return kernel_states_[node].get(); }

  // The executor's per-run state (executor.h).
  std::vector<int32_t>& user_input_slots() { return user_input_slots_; }
  // By compact output index: the output's planned cell (nullptr: ignored output) and the plan
  // generation in which its slot was last seen holding that tensor after the kernel ran (0:
  // never, or not trusted). Side by side, as the compact loop reads them.
  struct PlacedOutput {
    const Tensor* planned = nullptr;
    uint64_t generation = 0;
  };
  std::vector<PlacedOutput>& placed_outputs() { return placed_outputs_; }
  // A weight the graph writes into: `own` gets `source`'s bytes before every run.
  void add_mutable_weight(std::shared_ptr<Storage> own, std::shared_ptr<Storage> source) {
    mutable_weights_.push_back({std::move(own), std::move(source)});
  }
  Status refresh_mutable_weights();
  // The values later runs read from the plan's constant nodes (constant_nodes.h), by slot, kept
  // from this frame's first complete run; `complete` once that run succeeded.
  struct KeptConstants {
    bool complete = false;
    std::vector<std::pair<int32_t, RuntimeValue>> values;
  };
  KeptConstants& kept_constants() { return kept_constants_; }
  // Collectives of the current run still in flight.
  PendingCollectives& pending_collectives() { return pending_collectives_; }

  const MemoryPlan& memory_plan() const { return memory_; }
  uint64_t arena_capacity() const { return arena_ ? arena_->bytes() : 0; }
  uint64_t arena_allocations() const { return arena_allocations_; }

 private:
  const ExecutionPlan& plan_;
  FrameOptions options_;
  std::vector<RuntimeValue> slots_;
  std::set<std::string, std::less<>> argument_names_;
  std::vector<NamedValue> arguments_;   // every node's, in node order
  std::vector<size_t> argument_begin_;  // node n's are [argument_begin_[n], argument_begin_[n + 1])
  std::optional<SymbolBindings> bindings_;  // those `prepare` last planned for
  std::vector<std::vector<int64_t>> sizes_;
  std::vector<bool> sizes_known_;
  std::vector<Tensor> planned_;
  std::vector<uint64_t> planned_bytes_;
  MemoryPlan memory_;
  std::shared_ptr<Storage> arena_;
  uint64_t arena_allocations_ = 0;
  uint64_t plan_generation_ = 0;
  std::vector<int32_t> user_input_slots_;
  std::vector<PlacedOutput> placed_outputs_;
  struct MutableWeight {
    std::shared_ptr<Storage> own, source;
  };
  std::vector<MutableWeight> mutable_weights_;
  KeptConstants kept_constants_;
  PendingCollectives pending_collectives_;
  std::vector<KernelStateSlot> kernel_states_;  // by node
};

}  // namespace nrt::exec
