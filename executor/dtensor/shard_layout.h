// Where a DTensor's local shard lies in its global tensor. Global sizes and placements are the
// truth; each rank derives its shard from its mesh coordinate. Uneven sharding follows
// torch.chunk: N elements over n shards give c = ceil(N/n) per shard, shard r holding
// [r*c, min(N, (r+1)*c)) — N=5 over 4 gives 2, 2, 1, 0 — and an empty shard reports offset N.
// Placements apply in mesh-dim order: Shard(d) on mesh dim i chunks whatever region the mesh dims
// before i left along tensor dim d (so [Shard(0), Shard(0)] on a 2x2 mesh splits dim 0 in four).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "executor/dtensor/placement.h"

namespace nrt::dist {

// A device mesh: `ranks` laid out row-major in `shape` (mesh = arange(world).view(shape) unless
// the program lists other ranks).
struct Mesh {
  std::string name;
  std::vector<int64_t> shape;
  std::vector<std::string> dim_names;  // empty, or one per mesh dim
  std::vector<int32_t> ranks;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  // This rank's coordinate in the mesh; nullopt when the mesh does not hold it.
  std::optional<std::vector<int64_t>> coordinate_of(int32_t rank) const;
  // The coordinate of position `flat` of `ranks` (row-major).
  std::vector<int64_t> coordinate_at(int64_t flat) const;
  // The ranks of the group along mesh dim `dim` through `coordinate` (every coordinate fixed but
  // `dim`), in order of their coordinate along `dim`: torch's group for that mesh dim.
  std::vector<int32_t> group_ranks(int64_t dim, const std::vector<int64_t>& coordinate) const;
  // Index of the mesh dim named `name`; nullopt when no dim has that name.
  std::optional<int64_t> dim_named(const std::string& name) const;
};

// A mesh coordinate as messages print it: "(0, 1)".
std::string coordinate_text(const std::vector<int64_t>& coordinate);

struct ChunkRange {
  int64_t offset = 0;
  int64_t size = 0;
};

// Shard `index` of `extent` elements split over `count` shards, as torch.chunk does.
ChunkRange chunk_range(int64_t extent, int64_t count, int64_t index);
// ceil(extent / count): the largest shard, the size every shard is padded to for a collective.
int64_t padded_chunk(int64_t extent, int64_t count);

// The chunks of `extent` elements that shard placement `p` gives index `index` of a mesh dim of
// `count`, in the order it holds them: its torch.chunk for Shard; for _StridedShard(dim, sf),
// chunks index, index + count, ..., index + (sf-1) count of the extent chunked count x sf ways,
// listed up to the first empty one (all after it are empty too). Never empty: an empty shard is
// one empty chunk, at the end.
std::vector<ChunkRange> held_chunks(const Placement& p, int64_t extent, int64_t count, int64_t index);

// The part of the global tensor a rank holds. Per tensor dim: its extent (`sizes`), where it
// starts (`offsets`: the first piece; an empty shard starts at the dim's end, as torch reports),
// and the ranges of the global dim it holds, in the order the shard holds them (`pieces`): one
// range, except under _StridedShard(dim, sf) on a mesh dim of n, where the rank at coordinate c
// holds chunks c, c + n, ..., c + (sf - 1) n of the dim chunked n x sf ways (torch.chunk).
struct ShardRegion {
  std::vector<int64_t> offsets;
  std::vector<int64_t> sizes;
  std::vector<std::vector<ChunkRange>> pieces;  // empty ranges left out

  // One range per dim: the shard is one box of the global tensor (a view can hold it).
  bool contiguous() const;
};

// The region `placements` (one per mesh dim; only the first `mesh_dims` apply, all when -1) give
// the rank at `coordinate` of a mesh of `mesh_shape`, placements applied in mesh-dim order.
// Checks: one placement per mesh dim, shard dims inside the tensor.
Result<ShardRegion> shard_region(const std::vector<int64_t>& global_sizes, const Placements& placements,
                                 const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coordinate,
                                 int64_t mesh_dims = -1);

// Checks that `placements` fit a tensor of `rank` dims on a mesh of `mesh_ndim` dims; the error
// names `what`.
Status check_placements(const Placements& placements, int64_t rank, int64_t mesh_ndim, const std::string& what);

}  // namespace nrt::dist
