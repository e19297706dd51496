// What running one graph of a verified program takes, decided once before any run:
//
//  - the schedule: the graph's nodes in file order (verification guarantees it is topological);
//  - per node, the kernel chosen from the registry for the device, and its arguments resolved
//    into frame slots: constants converted from the file's arguments into RuntimeValues once,
//    references to the slot of the value they name, lists holding references ("gathered")
//    rebuilt from their items' slots right before the call;
//  - per value, its slot, its tensor metadata (dtype and sizes, literal or symbolic), the step
//    that defines it and the last step that reads it, and the values whose memory it may alias
//    (outputs of view kernels, KernelInfo::is_view, may alias any tensor argument of their node;
//    conservatively all of them): a view's last use extends the lifetime of those roots;
//  - graph inputs (with their signature kind) and graph outputs.
//
// Steps: graph inputs are defined at step -1, node i runs at step i, and graph outputs are read at
// step num_nodes (so they outlive every node).
//
// In-place ops (aten::relu_, add_.Tensor, ...) and out= variants without a kernel of their own run
// as their functional op (executor/runtime/in_place_target.h): the functional kernel writes into a scratch
// value planned like the node's output, then aten::copy.default writes that into the mutated
// argument (through its strides, into its base storage), and the node's output is the mutated
// tensor itself, planned as a view of it. Later readers of the mutated value, of its views and of
// the node's output all see the new values. A graph input the graph mutates is marked so that the
// executor gives it memory of its own. An element-wise functional op (computes_into_self)
// computes straight into the mutated tensor instead, when that tensor is writable, of the result's
// dtype, and no other argument shares its storage; the write-back then has nothing to do.
//
// A convolution followed by an inference batch norm and an activation that nothing else reads
// runs as one node: the batch norm and activation nodes become views of its output
// (convolution_fusion.h).
//
// Every node's target must have a kernel for the device; otherwise building fails with ONE error
// that lists every missing target (and the nodes using it). `missing_kernels` reports the same
// list without failing. Subgraph arguments become GraphRef constants (the executor binds them to
// runners). Argument kinds the executor cannot pass to a kernel (custom objects, operators, nested
// lists, maps, complex numbers) fail the build naming node and argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/runtime/device.h"
#include "executor/runtime/in_place_target.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/op_facts.h"
#include "executor/runtime/runtime_value.h"
#include "schema/nrt_generated.h"
#include "core/error.h"

namespace nrt::exec {

// Targets that communicate through the run's process groups (op_facts.h): torch's functional
// collectives and the sharding pass's redistribution steps (executor/dtensor/sharding_pass.h).
// Their group arguments are bound at load; the executor marks the calls with their node
// (CollectiveOrigin).
inline bool is_collective_target(std::string_view target) {
  const OpFacts* facts = op_facts(target);
  return facts != nullptr && facts->collective;
}

// A dimension (or stride) as the file records it: a literal, or an expression over symbols (sym_expr.h).
struct PlannedDim {
  int64_t literal = 0;
  std::string expr;  // empty: literal
  std::optional<int64_t> hint;  // example value of `expr`, when the file records one
};

struct ValueInfo {
  std::string name;
  fb::ValueKind kind = fb::ValueKind::UNKNOWN;
  int32_t slot = -1;  // -1: never defined in this graph
  bool has_meta = false;  // tensor kinds with TensorMeta
  ScalarType dtype = ScalarType::UNKNOWN;
  std::vector<PlannedDim> sizes;
  std::vector<PlannedDim> strides;  // as recorded; planned memory follows them when dense
  int64_t def_step = -2;   // -1: graph input; -2: never defined
  int64_t last_use = -2;   // last step reading it (num_nodes: graph output); def_step when unread
  // Views: the values whose memory this one may alias (the roots of every tensor argument of the
  // view node; a root aliases nothing). Empty for values with memory of their own.
  std::vector<int32_t> alias_roots;
  int64_t lifetime_end = -2;  // last_use, extended to the last use of every view aliasing it
  bool defined_by_list = false;  // element of a list output (the kernel allocates it)
  bool planned = false;    // gets arena memory (tensor output of a non-view kernel, single slot)
  std::string sym_expr;  // SYM_INT / SYM_FLOAT / SYM_BOOL values: SymInfo.expr, when recorded
  std::optional<int64_t> sym_hint;
  std::optional<ProcessGroupRef> process_group;  // PROCESS_GROUP values
  bool mutated_in_place = false;  // a graph input an in-place node writes into (or a view of it)
};

// A list argument built from slots before a node runs.
struct GatherStep {
  enum class Kind { kTensors, kOptionalTensors, kInts, kFloats, kBools };
  Kind kind = Kind::kTensors;
  int32_t target_slot = -1;
  struct Item {
    int32_t slot = -1;  // -1: the literal (or None)
    int64_t int_literal = 0;
    double float_literal = 0;
    bool bool_literal = false;
  };
  std::vector<Item> items;
};

enum class OutputSlotKind {
  kIgnored,  // NoneArg / optional None / an output nothing reads: whatever the kernel leaves is dropped
  kValue,    // defines `value` directly in the slot
  kList,     // a list whose elements define `elements` (unpacked after the call)
};

struct PlannedOutput {
  OutputSlotKind kind = OutputSlotKind::kIgnored;
  int32_t slot = -1;
  int32_t value = -1;             // kValue
  std::vector<int32_t> elements;  // kList: value index per element
};

// An in-place or out= node run through its functional kernel (see the top of this file).
struct InPlaceWrite {
  int32_t target_slot = -1;    // slot of the mutated tensor (`self`, or `out`)
  int32_t scratch_value = -1;  // hidden value receiving the functional result; -1 when unplanned
  std::string functional_target;
  KernelFn write_back = nullptr;  // aten::copy.default for the device
  bool functional_is_view = false;  // its result must then be the mutated tensor itself
  bool into_self = false;  // computes_into_self(functional_target): may compute into the target
};

struct PlannedNode {
  uint32_t node_index = 0;
  std::string name;
  std::string target;  // namespace::name.overload, as aten::add.Tensor
  KernelInfo kernel;
  std::vector<std::string> arg_names;
  std::vector<int32_t> arg_slots;
  std::vector<GatherStep> gathers;
  int32_t first_output_slot = 0;  // outputs occupy [first_output_slot, + outputs.size())
  std::vector<PlannedOutput> outputs;
  std::vector<int32_t> releases;  // values whose lifetime ends after this node
  std::optional<InPlaceWrite> in_place;
  bool collective = false;  // a `_c10d_functional::*` node: its kernel gets the run's PendingCollectives
  // Its collective may still be in flight when the kernel returns (only wait_tensor reads the output).
  bool defer_collective_wait = false;
  // A seeded draw (OpFacts::seeded_draw): the node's random stream, FNV-1a 64 of
  // "<graph name>/<node name>", which no schedule or address changes.
  std::optional<uint64_t> random_stream;
};

struct PlannedInput {
  fb::InputKind kind = fb::InputKind::USER_INPUT;  // USER_INPUT for graphs without a signature
  int32_t value = -1;  // -1: a constant input slot
  std::string target;  // fqn for parameters, buffers, constants
  std::optional<RuntimeValue> constant;  // CONSTANT_INPUT, or a constant graph input slot
};

struct PlannedGraphOutput {
  fb::OutputKind kind = fb::OutputKind::USER_OUTPUT;
  std::string name;    // value name; "output<i>" for a constant
  int32_t value = -1;  // -1: constant
  std::optional<RuntimeValue> constant;
};

struct ConstantSlot {
  int32_t slot;
  RuntimeValue value;
};

struct ExecutionPlan {
  const fb::Program* program = nullptr;
  uint32_t graph_index = 0;
  std::string graph_name;
  Device device;
  int32_t num_slots = 0;
  // By graph value index; hidden scratch values of in-place nodes follow the graph's values.
  std::vector<ValueInfo> values;
  std::vector<ConstantSlot> constants;
  std::vector<PlannedNode> nodes;
  std::vector<PlannedInput> inputs;
  std::vector<PlannedGraphOutput> outputs;

  int64_t num_steps() const { return static_cast<int64_t>(nodes.size()); }
};

// The error of `node` of graph `graph`: "graph 'main' node 3 'add' (aten::add.Tensor): <message>".
Error node_error(std::string_view graph, const PlannedNode& node, const std::string& message, ErrorCode code);

// "f32[8,s0]": a value's recorded dtype and sizes, for messages.
std::string describe_meta(const ValueInfo& info);

// Index of the graph named `name`; an empty name means the first entry point.
Result<uint32_t> find_graph(const fb::Program& program, std::string_view name);

Result<ExecutionPlan> build_execution_plan(const fb::Program& program, std::string_view graph_name, Device device,
                                           const KernelRegistry& registry = KernelRegistry::global());

// The targets used by `graph_name` (and the subgraphs it references) that have no kernel for
// `device`, sorted and unique. Empty when everything is supported.
Result<std::vector<std::string>> missing_kernels(const fb::Program& program, std::string_view graph_name,
                                                 Device device = {},
                                                 const KernelRegistry& registry = KernelRegistry::global());

}  // namespace nrt::exec
