// Synthetic programs for the benchmarks (bench-only; tests build their own small programs).
//
// The ladder: one entry graph `forward(p_w, x)` of `num_nodes` nodes cycling through
// aten::add.Tensor(prev, p_w, alpha=1 as keyword), aten::mul.Tensor(prev, x) and
// aten::relu.default(prev), every value an f32[8,64] contiguous CPU tensor, every node carrying
// torch.export-style metadata (stack_trace, nn_module_stack, torch_fn). The parameter `w` is one
// weight backed by storage 0 (kLadderWeightBytes). The same ladder is also produced as
// torch.export ExportedProgram JSON text (schema 8.20), node for node, names and metadata equal,
// so a parser of either form sees the same graph.
//
// The weighted program: `num_storages` parameters of `storage_bytes` each (f32 [rows, 1024]),
// passed through one relu of the user input; for measuring what opening costs with large weights.
#pragma once

#include <cstdint>
#include <string>

#include "schema/nrt_generated.h"

namespace nrt::bench {

inline constexpr uint64_t kLadderWeightBytes = 8 * 64 * sizeof(float);

// The ladder in the object API; Program.storages has one entry awaiting kLadderWeightBytes bytes.
fb::ProgramT make_ladder_program(uint32_t num_nodes);

// The same ladder as torch.export ExportedProgram JSON (the text of a .pt2's models/model.json).
std::string make_ladder_torch_json(uint32_t num_nodes);

// `storage_bytes` must be a positive multiple of 4096 (rows of 1024 floats).
fb::ProgramT make_weighted_program(uint32_t num_storages, uint64_t storage_bytes);

}  // namespace nrt::bench
