// Runs one graph of a verified program.
//
// `load` builds the execution plan (every kernel chosen, all missing targets reported at once),
// binds the weights zero-copy (borrowed views of the file's storages, kept alive with the file;
// a storage whose bytes are misaligned for its dtype is the one exception and is copied), binds
// process groups by name, and creates the execution frame. A parameter, buffer or constant
// without data in the file fails the load naming every such fqn.
//
// `run` binds the user inputs by value name, checks them against the graph's metadata (dtype,
// rank, literal sizes; symbolic sizes bind their symbols, which must agree across inputs and
// satisfy the program's range constraints), runs every node in schedule order and returns the
// user outputs (USER_OUTPUT and LOSS_OUTPUT; mutation outputs are not returned) named by their
// value names, in graph order. Kernel results are checked against the graph's metadata too: a
// tensor output must have the recorded dtype and (known) sizes.
//
// The groups of `_c10d_functional::*` nodes (ProcessGroupArgs, or plain `group_name` strings) must
// be bound at load time: an unbound one fails the load with CollectiveFailed naming the group and
// its ranks, before anything runs.
//
// Subgraphs the graph passes to kernels (control flow) get executors of their own, created at load
// time and bound to the GraphRef arguments (executor/runtime/graph_runner.h); an Executor is the
// GraphRunner of its graph.
//
// The plan is immutable once `load` returns and is shared by every run; everything a run writes
// (bound inputs, slots, the arena, the compact loop's placement cache, owned copies of mutated
// weights) lives in an ExecutionFrame. `run` takes an idle frame from the executor's pool, or
// makes one when every frame is busy, so one loaded program runs from any number of threads at
// once; a single thread always gets the frame made at load (`frame()`), so a second run allocates
// nothing. Subgraph runners are executors too, with pools of their own.
//
// Outputs are copies owned by the caller unless ExecutorOptions::copy_outputs is false; then
// they view the frame's memory and stay valid only until that frame's next run (with concurrent
// runs: only until the calling thread's next run returns them to the pool — use copies).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "executor/runtime/constant_nodes.h"
#include "executor/runtime/execution_frame.h"
#include "executor/runtime/execution_plan.h"
#include "executor/runtime/graph_runner.h"
#include "executor/comm/process_group.h"
#include "executor/runtime/run_profile.h"
#include "serializer/program_file.h"

namespace nrt::exec {

struct ExecutorOptions {
  std::string graph;                   // empty: the first entry point
  Device device;                       // kernels are looked up for this device
  std::optional<bool> poison_freed;    // default: NRT_POISON_FREED from the environment
  bool copy_outputs = true;
  // The seed of the seeded random ops (rand, randn, dropout in training, ...; docs/RANDOM.md):
  // with the node's stream it decides every value drawn, on any schedule, sharding or rank count.
  uint64_t seed = 0;
  // Binds the program's process groups; default: single_process_registry(program).
  std::shared_ptr<const ProcessGroupRegistry> process_groups;
};

// A user input as the graph declares it (for callers that build inputs, e.g. --random-inputs).
struct InputDescription {
  std::string name;
  fb::ValueKind kind = fb::ValueKind::TENSOR;
  ScalarType dtype = ScalarType::UNKNOWN;  // tensors
  std::vector<PlannedDim> sizes;           // tensors
  std::optional<int64_t> sym_hint;         // symbolic scalars
};

struct NamedOutput {
  std::string name;
  RuntimeValue value;
};

using NamedInputs = std::map<std::string, RuntimeValue, std::less<>>;

class Executor final : public GraphRunner {
 public:
  static Result<std::unique_ptr<Executor>> load(ProgramFile file, ExecutorOptions options = {});
  static Result<std::unique_ptr<Executor>> load(std::shared_ptr<const ProgramFile> file, ExecutorOptions options = {});

  // Thread-safe: concurrent calls run in frames of their own.
  Result<std::vector<NamedOutput>> run(const NamedInputs& inputs);
  // Times every node of the following runs into `profile` (nullptr: stop). Not owned. Call it
  // between runs; while a profile is set, runs take turns (a RunProfile records one run at a time).
  void set_profile(RunProfile* profile) { profile_ = profile; }

  const ExecutionPlan& plan() const { return *plan_; }
  // The frame made at load: the one every run of a single thread uses.
  const ExecutionFrame& frame() const { return *first_frame_; }
  // Frames made so far (1 until runs overlap).
  size_t frame_count() const;
  // Makes frames until there are `count`, so that as many runs at once allocate no frame (callers
  // that know their concurrency: nrt.Runner(threads=N)).
  Status reserve_frames(size_t count);
  // Memory planned in frame() for the sizes of its last run (of the load, before any run).
  const MemoryPlan& memory_plan() const { return first_frame_->memory_plan(); }
  std::vector<InputDescription> user_inputs() const;

  // GraphRunner: the user inputs by position, the user outputs in order.
  const std::string& graph_name() const override { return plan_->graph_name; }
  size_t num_graph_inputs() const override { return user_input_names_.size(); }
  Result<GraphOutputs> run_graph(std::span<const RuntimeValue> inputs) override;

 private:
  Executor() = default;
  // Loading and binding (executor.cc).
  Status bind_collective_groups(ExecutionPlan& plan) const;
  Status bind_subgraphs(ExecutionPlan& plan);
  Status bind_weights(const ExecutionPlan& plan);
  void build_compact_nodes();
  Result<std::unique_ptr<ExecutionFrame>> make_frame() const;
  Result<ExecutionFrame*> acquire_frame();
  void release_frame(ExecutionFrame* frame);
  // Running (executor_run.cc).
  Result<std::vector<NamedOutput>> run_in(ExecutionFrame& frame, const NamedInputs& inputs);
  Status bind_inputs(ExecutionFrame& frame, const NamedInputs& inputs, SymbolBindings* bindings) const;
  Status execute_node(ExecutionFrame& frame, size_t n) const;
  Status execute_compact(ExecutionFrame& frame, size_t n) const;
  Status write_in_place(ExecutionFrame& frame, const PlannedNode& node) const;
  const Tensor* computes_into_target(ExecutionFrame& frame, const PlannedNode& node, const Tensor* scratch) const;
  Status execute_profiled(ExecutionFrame& frame, size_t n, bool compact) const;
  Status keep_constants(ExecutionFrame& frame, size_t n) const;
  std::string argument_shapes(const ExecutionFrame& frame, size_t n) const;
  Status check_result(const ExecutionFrame& frame, const PlannedNode& node, size_t value,
                      const RuntimeValue& result) const;
  Error node_error(const PlannedNode& node, const std::string& message, ErrorCode code) const;

  // Fixed at load.
  std::shared_ptr<const ProgramFile> file_;
  ExecutorOptions options_;
  FrameOptions frame_options_;
  void* device_context_ = nullptr;  // the device allocator's execution context (nullptr: host)
  std::shared_ptr<const ProcessGroupRegistry> groups_;
  std::shared_ptr<const ExecutionPlan> plan_;
  // Runners bound to GraphRef constants: the root executor owns one per subgraph of its tree.
  using SubgraphRunners = std::map<uint32_t, std::unique_ptr<Executor>>;
  static Result<std::unique_ptr<Executor>> load_graph(std::shared_ptr<const ProgramFile> file,
                                                      ExecutorOptions options, SubgraphRunners* runners);
  SubgraphRunners owned_runners_;
  SubgraphRunners* runners_ = nullptr;  // the root's

  // What running a node reads, packed per node, so that a long chain of small kernels streams
  // through three small arrays rather than the plan's larger records. Nodes without list
  // arguments or list outputs run from these (execute_compact); the others, and every node in
  // poison mode, through execute_node. What the loop caches between runs is in the frame
  // (ExecutionFrame::placed_generation, by index into compact_outputs_).
  struct CompactOutput {
    int32_t slot = -1;
    int32_t value = -1;  // -1: an ignored output
  };
  struct CompactRelease {
    int32_t slot = -1;
    int32_t value = -1;
  };
  struct CompactNode {
    KernelFn fn = nullptr;
    std::string_view target;
    int32_t first_output_slot = 0;
    uint32_t num_outputs = 0;
    uint32_t outputs_begin = 0;  // into compact_outputs_
    uint32_t releases_begin = 0, releases_end = 0;  // into compact_releases_
    bool compact = false;
    bool collective = false;  // PlannedNode::collective
    bool defer_collective_wait = false;
    bool context_extras = false;  // a collective, a device context or a draw: the KernelContext gets more
    std::optional<uint64_t> random_stream;  // PlannedNode::random_stream
  };
  std::vector<CompactNode> compact_nodes_;
  std::vector<CompactOutput> compact_outputs_;
  std::vector<CompactRelease> compact_releases_;
  // Slots every frame starts from beyond the plan's constants: weights (views of the file),
  // constant inputs, process groups, tokens.
  std::vector<ConstantSlot> bound_slots_;
  // Weights the graph mutates in place: the file's bytes, and the slots of tensors viewing them
  // (each frame gets copies of its own, reset from the file before every run).
  struct MutableWeight {
    std::shared_ptr<Storage> source;
    std::vector<int32_t> slots;
  };
  std::vector<MutableWeight> mutable_weights_;
  std::vector<std::string> user_input_names_;  // in graph order, for run_graph
  // Nodes every run computes alike, run in a frame's first run only (constant_nodes.h); none
  // off the host.
  ConstantNodes constant_nodes_;

  // The frame pool. first_frame_ is made at load and never leaves frames_.
  RunProfile* profile_ = nullptr;
  std::mutex profile_mutex_;
  mutable std::mutex frames_mutex_;
  std::vector<std::unique_ptr<ExecutionFrame>> frames_;
  std::vector<ExecutionFrame*> idle_frames_;
  ExecutionFrame* first_frame_ = nullptr;
};

}  // namespace nrt::exec
