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
// time and bound to the GraphRef arguments (executor/graph_runner.h); an Executor is the
// GraphRunner of its graph.
//
// Outputs are copies owned by the caller unless ExecutorOptions::copy_outputs is false; then
// they view the frame's memory and stay valid only until the next run. An Executor is not
// thread-safe: one run at a time.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/execution_frame.h"
#include "executor/execution_plan.h"
#include "executor/graph_runner.h"
#include "executor/process_group.h"
#include "executor/run_profile.h"
#include "serializer/program_file.h"

namespace nrt::exec {

struct ExecutorOptions {
  std::string graph;                   // empty: the first entry point
  Device device;                       // kernels are looked up for this device
  std::optional<bool> poison_freed;    // default: NRT_POISON_FREED from the environment
  bool copy_outputs = true;
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

  Result<std::vector<NamedOutput>> run(const NamedInputs& inputs);
  // Times every node of the following runs into `profile` (nullptr: stop). Not owned.
  void set_profile(RunProfile* profile) { profile_ = profile; }

  const ExecutionPlan& plan() const { return plan_; }
  const ExecutionFrame& frame() const { return *frame_; }
  // Memory planned for the sizes of the last run (of the load, before any run).
  const MemoryPlan& memory_plan() const { return frame_->memory_plan(); }
  std::vector<InputDescription> user_inputs() const;

  // GraphRunner: the user inputs by position, the user outputs in order.
  const std::string& graph_name() const override { return plan_.graph_name; }
  size_t num_graph_inputs() const override { return user_input_names_.size(); }
  Result<std::vector<RuntimeValue>> run_graph(std::span<const RuntimeValue> inputs) override;

 private:
  Executor() = default;
  Status bind_collective_groups();
  Status bind_subgraphs();
  Status bind_weights();
  Status bind_inputs(const NamedInputs& inputs, SymbolBindings* bindings);
  void build_compact_nodes();
  Status execute_node(size_t n);
  Status execute_compact(size_t n);
  Status write_in_place(const PlannedNode& node);
  Status execute_profiled(size_t n, bool compact);
  std::string argument_shapes(size_t n) const;
  void refresh_mutated_weights();
  Status check_result(const PlannedNode& node, size_t value, const RuntimeValue& result) const;
  Error node_error(const PlannedNode& node, const std::string& message, ErrorCode code) const;

  std::shared_ptr<const ProgramFile> file_;
  ExecutorOptions options_;
  std::shared_ptr<const ProcessGroupRegistry> groups_;
  RunProfile* profile_ = nullptr;
  ExecutionPlan plan_;
  std::unique_ptr<ExecutionFrame> frame_;
  // Runners bound to GraphRef constants: the root executor owns one per subgraph of its tree.
  using SubgraphRunners = std::map<uint32_t, std::unique_ptr<Executor>>;
  static Result<std::unique_ptr<Executor>> load_graph(std::shared_ptr<const ProgramFile> file,
                                                      ExecutorOptions options, SubgraphRunners* runners);
  SubgraphRunners owned_runners_;
  SubgraphRunners* runners_ = nullptr;  // the root's

  // What running a node reads, packed per node, so that a long chain of small kernels streams
  // through three small arrays rather than the plan's larger records. Nodes without list
  // arguments or list outputs run from these (execute_compact); the others, and every node in
  // poison mode, through execute_node.
  struct CompactOutput {
    int32_t slot = -1;
    int32_t value = -1;               // -1: an ignored output
    const Tensor* planned = nullptr;  // the frame's cell for the value
    // The frame's plan generation in which the slot was last seen holding the planned tensor
    // after the kernel ran; while it is current the slot needs no re-placing.
    uint64_t placed_generation = 0;
  };
  struct CompactRelease {
    int32_t slot = -1;
    const Tensor* planned = nullptr;
  };
  struct CompactNode {
    KernelFn fn = nullptr;
    std::string_view target;
    int32_t first_output_slot = 0;
    uint32_t num_outputs = 0;
    uint32_t outputs_begin = 0;  // into compact_outputs_
    uint32_t releases_begin = 0, releases_end = 0;  // into compact_releases_
    bool compact = false;
  };
  std::vector<CompactNode> compact_nodes_;
  std::vector<CompactOutput> compact_outputs_;
  std::vector<CompactRelease> compact_releases_;
  std::vector<int32_t> user_input_slots_;  // cleared after every run
  // Weights the graph mutates in place: owned copies of their storages, and the file's bytes.
  struct MutableWeight {
    std::shared_ptr<Storage> own;
    std::shared_ptr<Storage> source;
  };
  std::vector<MutableWeight> mutable_weights_;
  std::vector<std::string> user_input_names_;  // in graph order, for run_graph
};

}  // namespace nrt::exec
