// The local sizes of a DTensor's shard at mesh coordinate (0, ..., 0): what a DTENSOR value's
// `Value.tensor` stores (docs/FORMAT.md, DTensor values). Placements apply in mesh-dim order,
// chunks follow torch.chunk; _StridedShard(dim, sf) on a mesh dim of n gives coordinate 0 the
// chunks 0, n, 2n, ... of the dim chunked n x sf ways. Walks sum(split_factor) chunks: callers
// bounding work charge that first.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "schema/nrt_generated.h"

namespace nrt {

// torch.chunk of `size` into `n`: the extent of chunk `index`.
int64_t chunk_extent(int64_t size, int64_t n, int64_t index);

// `placements` holds one entry per mesh dim (mesh_shape.size()), each dim within `global`.
std::vector<int64_t> coordinate_zero_shard_sizes(std::vector<int64_t> global, std::span<const fb::Placement> placements,
                                                 std::span<const int64_t> mesh_shape);

}  // namespace nrt
