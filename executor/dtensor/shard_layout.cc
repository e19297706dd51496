#include "executor/dtensor/shard_layout.h"

#include <algorithm>

namespace nrt::dist {

std::optional<std::vector<int64_t>> Mesh::coordinate_of(int32_t rank) const {
  auto it = std::find(ranks.begin(), ranks.end(), rank);
  if (it == ranks.end()) return std::nullopt;
  return coordinate_at(it - ranks.begin());
}

std::string coordinate_text(const std::vector<int64_t>& coordinate) {
  std::string text;
  for (int64_t x : coordinate) text += (text.empty() ? "" : ", ") + std::to_string(x);
  return "(" + text + ")";
}

std::vector<int64_t> Mesh::coordinate_at(int64_t flat) const {
  std::vector<int64_t> coordinate(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    coordinate[d] = flat % shape[d];
    flat /= shape[d];
  }
  return coordinate;
}

std::vector<int32_t> Mesh::group_ranks(int64_t dim, const std::vector<int64_t>& coordinate) const {
  std::vector<int32_t> out;
  std::vector<int64_t> at = coordinate;
  for (int64_t i = 0; i < shape[static_cast<size_t>(dim)]; ++i) {
    at[static_cast<size_t>(dim)] = i;
    int64_t flat = 0;
    for (size_t d = 0; d < shape.size(); ++d) flat = flat * shape[d] + at[d];
    out.push_back(ranks[static_cast<size_t>(flat)]);
  }
  return out;
}

std::optional<int64_t> Mesh::dim_named(const std::string& dim_name) const {
  for (size_t d = 0; d < dim_names.size(); ++d) {
    if (dim_names[d] == dim_name) return static_cast<int64_t>(d);
  }
  return std::nullopt;
}

int64_t padded_chunk(int64_t extent, int64_t count) { return count <= 0 ? 0 : (extent + count - 1) / count; }

ChunkRange chunk_range(int64_t extent, int64_t count, int64_t index) {
  const int64_t c = padded_chunk(extent, count);
  const int64_t begin = std::min(extent, index * c);
  const int64_t end = std::min(extent, (index + 1) * c);
  return {begin, std::max<int64_t>(0, end - begin)};
}

Status check_placements(const Placements& placements, int64_t rank, int64_t mesh_ndim, const std::string& what) {
  if (static_cast<int64_t>(placements.size()) != mesh_ndim) {
    return make_error(ErrorCode::InvalidArgument, what + ": " + std::to_string(placements.size()) +
                                                      " placements for a mesh of " + std::to_string(mesh_ndim) +
                                                      " dims (one per mesh dim)");
  }
  for (const Placement& p : placements) {
    if (p.kind == Placement::Kind::kStridedShard && (p.split_factor < 1 || p.split_factor > kMaxSplitFactor)) {
      return make_error(ErrorCode::InvalidArgument, what + ": " + to_string(p) + " has a split factor outside [1, " +
                                                        std::to_string(kMaxSplitFactor) + "]");
    }
    if (p.is_shard() && (p.dim < 0 || p.dim >= rank)) {
      return make_error(ErrorCode::InvalidArgument, what + ": " + to_string(p) + " on a tensor of " +
                                                        std::to_string(rank) + " dims");
    }
  }
  return {};
}

std::vector<ChunkRange> held_chunks(const Placement& p, int64_t extent, int64_t count, int64_t index) {
  if (p.kind != Placement::Kind::kStridedShard) return {chunk_range(extent, count, index)};
  std::vector<ChunkRange> chunks;
  for (int64_t j = 0; j < p.split_factor; ++j) {
    const ChunkRange chunk = chunk_range(extent, count * p.split_factor, index + j * count);
    if (chunk.size == 0 && !chunks.empty()) break;
    chunks.push_back(chunk);
  }
  return chunks;
}

bool ShardRegion::contiguous() const {
  return std::all_of(pieces.begin(), pieces.end(), [](const auto& ranges) { return ranges.size() <= 1; });
}

namespace {

// The global ranges that local range `part` covers, `held` being the global ranges the local
// extent is made of, in order; adjacent ranges merged.
void map_local_range(const std::vector<ChunkRange>& held, ChunkRange part, std::vector<ChunkRange>& out) {
  int64_t position = 0;
  for (const ChunkRange& range : held) {
    const int64_t begin = std::max(part.offset, position), end = std::min(part.offset + part.size, position + range.size);
    if (begin < end) {
      const ChunkRange global{range.offset + (begin - position), end - begin};
      if (!out.empty() && out.back().offset + out.back().size == global.offset) {
        out.back().size += global.size;
      } else {
        out.push_back(global);
      }
    }
    position += range.size;
  }
}

}  // namespace

Result<ShardRegion> shard_region(const std::vector<int64_t>& global_sizes, const Placements& placements,
                                 const std::vector<int64_t>& mesh_shape, const std::vector<int64_t>& coordinate,
                                 int64_t mesh_dims) {
  NRT_RETURN_IF_ERROR(check_placements(placements, static_cast<int64_t>(global_sizes.size()),
                                       static_cast<int64_t>(mesh_shape.size()), "placements " + to_string(placements)));
  ShardRegion region{std::vector<int64_t>(global_sizes.size(), 0), global_sizes, {}};
  for (int64_t extent : global_sizes) {
    region.pieces.push_back(extent > 0 ? std::vector<ChunkRange>{{0, extent}} : std::vector<ChunkRange>{});
  }
  const size_t n = mesh_dims < 0 ? placements.size() : static_cast<size_t>(mesh_dims);
  for (size_t i = 0; i < n; ++i) {
    const Placement& p = placements[i];
    if (!p.is_shard()) continue;
    const auto d = static_cast<size_t>(p.dim);
    const int64_t extent = region.sizes[d], count = mesh_shape[i];
    const std::vector<ChunkRange> local = held_chunks(p, extent, count, coordinate[i]);
    std::vector<ChunkRange> pieces;
    int64_t size = 0;
    for (const ChunkRange& part : local) {
      map_local_range(region.pieces[d], part, pieces);
      size += part.size;
    }
    if (!pieces.empty()) {
      region.offsets[d] = pieces.front().offset;
    } else {  // an empty shard starts where its chunk would: at the end
      region.offsets[d] += p.kind == Placement::Kind::kStridedShard ? extent : local.front().offset;
    }
    region.sizes[d] = size;
    region.pieces[d] = std::move(pieces);
  }
  return region;
}

}  // namespace nrt::dist
