// Redistribution of a DTensor's local shard from one set of placements to another, as steps on
// single mesh dims issuing collectives through the ProcessGroup seam (REFERENCE.md §4):
//
//   Shard(d) -> Replicate    all_gather: pad every shard to ceil(E/n) along d, gather, unpad
//   Partial -> Replicate     all_reduce with the Partial's op
//   Partial -> Shard(d)      reduce_scatter: pad to n*ceil(E/n) along d, scatter, unpad
//   Replicate -> Shard(d)    the rank's torch.chunk of the tensor, no traffic
//   Replicate -> Partial     group rank 0 keeps the value, the others hold the op's identity
//                            (0 for sum, 1 for product; avg, max and min keep the value on
//                            every rank): exact for every dtype, where torch's value/n rounds
//   Shard(i) -> Shard(j)     all_to_all: each rank sends every other the part of its shard
//                            that rank's new shard holds (exact sizes, no padding)
//   anything else            through Replicate (Partial(a) -> Partial(b); Shard -> Partial,
//                            which torch's redistribute refuses, but a rule wanting a partial
//                            operand, a bias beside a rowwise weight, needs)
//
// E is the extent along d of the region the group holds together: what the mesh dims before
// this one leave (shard_layout.h). On 2-D meshes plan_redistribute orders the steps: the mesh
// dims after the first one that changes undo what they hold, last first (a Partial that stays
// is left: it is partial over any region); the first changing dim goes straight to its target;
// then the dims after it take theirs. Dims before the first change keep their placement, so the
// region every step sees is the one its group holds together.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"
#include "executor/dtensor/placement.h"
#include "executor/comm/process_group.h"
#include "executor/runtime/tensor.h"

namespace nrt::dist {

struct RedistributeStep {
  int64_t mesh_dim = 0;
  Placement from;
  Placement to;
  Placements before;  // every mesh dim's placement before the step
  Placements after;
};

// The steps from `src` to `dst` (same length); empty when they are equal.
Result<std::vector<RedistributeStep>> plan_redistribute(const Placements& src, const Placements& dst);

// The collective a step issues: "all_gather", "all_reduce", "reduce_scatter", "all_to_all", or
// "none".
const char* step_collective(const RedistributeStep& step);

// One step on the group of its mesh dim. `region_sizes`: the sizes of the region the group holds
// together (shard_region of the step's `before` placements over the mesh dims before it).
// Returns a new contiguous tensor; `local` is not written.
Result<exec::Tensor> redistribute_step(const exec::Tensor& local, const Placement& from, const Placement& to,
                                       const std::vector<int64_t>& region_sizes, exec::ProcessGroup& group);

// Every step of plan_redistribute(src, dst) on `local`; `groups[i]` is the group of mesh dim i
// through this rank, `coordinate` this rank's mesh coordinate.
Result<exec::Tensor> redistribute(const exec::Tensor& local, const std::vector<int64_t>& global_sizes,
                                  const Placements& src, const Placements& dst, const std::vector<int64_t>& mesh_shape,
                                  const std::vector<int64_t>& coordinate, std::span<exec::ProcessGroup* const> groups);

// This rank's local tensor of a global value with `placements` (no traffic): the shard's region
// copied out; a Partial mesh dim gives its group rank 0 the value and the others the op's
// identity, as Replicate -> Partial does.
Result<exec::Tensor> local_from_global(const exec::Tensor& global, const Placements& placements,
                                       const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coordinate);

}  // namespace nrt::dist
