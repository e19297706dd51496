#include "serializer/coordinate_zero_shard.h"

#include <algorithm>

namespace nrt {

int64_t chunk_extent(int64_t size, int64_t n, int64_t index) {
  const int64_t c = (size + n - 1) / n;
  return std::max<int64_t>(0, std::min(size, (index + 1) * c) - index * c);
}

std::vector<int64_t> coordinate_zero_shard_sizes(std::vector<int64_t> global, std::span<const fb::Placement> placements,
                                                 std::span<const int64_t> mesh_shape) {
  for (size_t p = 0; p < placements.size() && p < mesh_shape.size(); ++p) {
    const auto& placement = placements[p];
    const int64_t n = mesh_shape[p];
    if (placement.dim() < 0 || static_cast<size_t>(placement.dim()) >= global.size()) continue;
    int64_t& extent = global[static_cast<size_t>(placement.dim())];
    if (placement.kind() == fb::PlacementKind::SHARD) {
      extent = chunk_extent(extent, n, 0);
    } else if (placement.kind() == fb::PlacementKind::STRIDED_SHARD) {
      int64_t total = 0;
      for (int64_t j = 0; j < placement.split_factor(); ++j) {
        const int64_t chunk = chunk_extent(extent, n * placement.split_factor(), j * n);
        if (chunk == 0) break;  // chunks past the end: all empty
        total += chunk;
      }
      extent = total;
    }
  }
  return global;
}

}  // namespace nrt
