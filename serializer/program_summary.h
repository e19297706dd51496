// Facts about a program that `nrt-inspect info` reports: per graph its node count, an op histogram
// by target, and its inputs and outputs (dtype, shape, DTensor placements and mesh, signature
// kind); the program's meshes and process groups; weight bytes and parameter count.
//
// Contract: `summarize_program` takes a verified program (ProgramFile) and never reads weight
// bytes. Strings are display text (names escaped as in program_text.h); numbers are exact, except
// that a parameter count beyond 2^64-1 saturates.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "schema/nrt_generated.h"

namespace nrt {

// One dimension: a literal, or a symbolic expression (then `literal` is meaningless).
struct DimSummary {
  int64_t literal = 0;
  std::optional<std::string> expr;
};

struct DTensorSummary {
  uint32_t mesh = 0;                    // index into ProgramSummary::meshes
  std::vector<std::string> placements;  // Shard(0), Replicate(), Partial(sum), ...
  std::vector<DimSummary> global_shape; // empty when the file does not record it
};

// A graph input or output slot.
struct SlotSummary {
  std::string name;                  // value name; empty for a constant slot
  std::string kind;                  // tensor, dtensor, sym_int, ..., or "constant"
  std::string type;                  // render_type text, or the constant's text
  std::optional<std::string> dtype;  // short name (f32) for tensors and DTensors
  std::vector<DimSummary> shape;     // local shape for DTensors
  std::optional<std::string> device; // cpu, cuda:0 (tensors and DTensors)
  std::optional<DTensorSummary> dtensor;
  std::optional<std::string> signature_kind;  // user_input, parameter, ...; entry points only
  std::optional<std::string> target;          // parameter / buffer fqn from the signature
};

struct GraphSummary {
  std::string name;
  bool entry_point = false;
  uint32_t num_nodes = 0;
  uint32_t num_values = 0;
  std::vector<SlotSummary> inputs;
  std::vector<SlotSummary> outputs;
  std::map<std::string, uint64_t> ops;  // target (aten::add.Tensor) -> number of nodes
};

struct MeshSummary {
  std::string name;
  std::string device_type;  // cpu, cuda, ...
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;
  std::vector<int32_t> ranks;
};

struct ProcessGroupSummary {
  std::string name;
  std::vector<int32_t> ranks;
  std::string backend;
  int32_t mesh = -1;  // -1: not derived from a mesh
  int32_t mesh_dim = -1;
};

struct ProgramSummary {
  std::string schema_version;  // "1.0"
  std::string producer;
  std::vector<GraphSummary> graphs;  // in file order
  std::vector<MeshSummary> meshes;
  std::vector<ProcessGroupSummary> process_groups;
  uint32_t num_weights = 0;
  uint32_t num_storages = 0;
  uint64_t weight_bytes = 0;    // sum of storage sizes: the bytes the weight segment holds
  uint64_t num_parameters = 0;  // sum of numel over weights with is_parameter
  std::vector<std::pair<std::string, std::string>> metadata;  // producer facts, in file order
};

ProgramSummary summarize_program(const fb::Program& program);

}  // namespace nrt
