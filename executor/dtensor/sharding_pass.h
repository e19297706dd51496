// The sharding pass: turns a DTensor program (global sizes and placements on some values, the
// file's form, docs/FORMAT.md) into the program one rank runs, planned at load.
//
// Every tensor value of the entry graph gets a placement on the program's mesh: DTensor values
// start from theirs, plain tensors are Replicate (whole on every rank). Walking the nodes in
// order, a rule per op family (sharding_rules.h) chooses the output placements and the placements
// its inputs need; an input in other placements is redistributed first, by nrt::redistribute_step
// nodes on the groups of the mesh dims (redistribute.h), inserted before the node. An op without a
// rule gets the fallback that is always correct: inputs redistributed to Replicate, computed
// whole. A value the program declares a DTensor ends in its declared placements (later nodes
// read it in the placements its node produced; to_local reads the declared ones).
//
// The result is a plain program for `rank`: every tensor value has this rank's local sizes, every
// DTensor parameter or buffer views its shard of the stored global tensor (no copy: the weight's
// metadata moves its offset and sizes), one process group per mesh dim and group is added
// (named "<mesh>.<dim>.<group index>", the same list on every rank), and with
// `global_outputs` every output ends Replicate, so every rank holds its global value under the
// output's own name.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/dtensor/placement.h"
#include "executor/dtensor/shard_layout.h"
#include "schema/nrt_generated.h"

namespace nrt::dist {

struct ShardingOptions {
  int32_t rank = 0;
  int32_t world_size = 1;
  std::string graph;            // empty: the first entry point
  bool global_outputs = true;   // false: outputs stay in their placements (--local-outputs)
};

// One inserted redistribution step, for the printed plan and the communication report.
struct PlannedStep {
  std::string value;  // the value redistributed
  int64_t mesh_dim = 0;
  Placement from, to;
  std::string collective;  // all_gather, all_reduce, reduce_scatter, none
};

struct PlannedNodeSharding {
  std::string node;
  std::string target;
  std::string rule;                       // "elementwise", "linear", ..., "replicate" (the fallback)
  std::vector<Placements> inputs;         // per tensor input, the placements it runs with
  Placements output;                      // placements of the first output
  std::vector<PlannedStep> steps;         // redistributions inserted before the node
  std::vector<PlannedStep> output_steps;  // after it: into a declared placement
  std::vector<PlannedStep> exchanges;     // the node's own collectives (arg reductions' exchange)
};

// A user input or output that is a DTensor, with what a caller needs to shard or assemble it.
struct ShardedValue {
  std::string name;
  std::vector<int64_t> global_sizes;
  Placements placements;  // outputs: the placements the value ends in on this rank
};

struct ShardingResult {
  fb::ProgramT program;   // the program this rank runs
  Mesh mesh;
  std::vector<int64_t> coordinate;
  std::vector<PlannedNodeSharding> nodes;
  std::vector<PlannedStep> final_steps;  // graph outputs into their final placements
  std::vector<ShardedValue> inputs;      // user inputs that are DTensors
  std::vector<ShardedValue> outputs;     // user outputs that are DTensors
};

// True when `program` has meshes and DTensor values: it needs the pass to run.
bool is_dtensor_program(const fb::Program& program);

// The world a DTensor program runs in: the rank count of its largest mesh.
int32_t mesh_world_size(const fb::Program& program);

// The nodes the plan runs whole on every rank, their sharded inputs gathered to Replicate: those
// without a rule, and those whose rule could keep no shard (a view that does not divide). What
// `nrt-inspect info --check-ops` lists.
std::vector<const PlannedNodeSharding*> replicated_nodes(const ShardingResult& result);

// The pass. Errors: a world whose size differs from the mesh's (InvalidArgument naming both),
// symbolic sizes of a DTensor (NotSupported), placements that do not fit their value.
Result<ShardingResult> shard_for_rank(const fb::Program& program, const ShardingOptions& options);

}  // namespace nrt::dist
