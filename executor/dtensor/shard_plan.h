// `nrt-inspect shard`: turns any program into a DTensor program by a plan (PLAN.json):
//
//   {"mesh": {"shape": [2, 2], "dim_names": ["dp", "tp"]},
//    "modules": {"fc1": "colwise", "fc2": "rowwise"},
//    "parameters": {"emb.weight": ["Replicate()", "Shard(0)"]},
//    "inputs": {"x": ["Shard(0)", "Replicate()"]},
//    "outputs": {"*": ["Replicate()", "Replicate()"]}}
//
// Placements are written as torch prints them, one per mesh dim. `modules` applies torch's
// parallel styles to the parameters under an fqn prefix, on a 1-D mesh or its dim named "tp":
// colwise = weight Shard(0), bias Shard(0); rowwise = weight Shard(1), bias Replicate.
// Unlisted parameters and inputs stay Replicate (plain tensors, whole on every rank); outputs
// default to Replicate ("*" sets every output not named). The mesh holds ranks 0..n-1 row-major.
//
// In the result the entry graph's chosen values are DTENSOR values: their DTensorSpec holds the
// global sizes and strides and the placements, their TensorMeta the shard of mesh coordinate
// (0, ..., 0) (docs/FORMAT.md); weights stay stored whole.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/dtensor/placement.h"
#include "schema/nrt_generated.h"
#include "serializer/program_file.h"

namespace nrt::dist {

struct ShardPlan {
  std::vector<int64_t> mesh_shape;
  std::vector<std::string> dim_names;
  std::map<std::string, std::string> modules;       // fqn prefix -> colwise | rowwise
  std::map<std::string, Placements> parameters;     // fqn -> placements
  std::map<std::string, Placements> inputs;         // user input name -> placements
  std::map<std::string, Placements> outputs;        // user output name or "*" -> placements
};

// Parses PLAN.json; errors (InvalidArgument) name the entry.
Result<ShardPlan> parse_shard_plan(const std::string& json_text);

// Applies `plan` to the entry graph of `program`. Errors name the entry: an unknown fqn, module
// prefix or input, a placement on a dim the tensor lacks, a program that already has DTensors.
Result<fb::ProgramT> apply_shard_plan(const fb::Program& program, const ShardPlan& plan);

// apply_shard_plan as a verified program that shares `file`'s weights (ProgramFile::with_program,
// no copy); saved, it is the file `nrt-inspect shard` writes (the session, nrt.shard).
Result<ProgramFile> shard_with_plan(const ProgramFile& file, const ShardPlan& plan);

}  // namespace nrt::dist
