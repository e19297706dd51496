#include "executor/dtensor/schema_placements.h"

#include "core/schema_enums.h"

namespace nrt::dist {

Result<Placement> from_schema(const fb::Placement& p) {
  Placement out;
  switch (p.kind()) {
    case fb::PlacementKind::REPLICATE:
      return out;
    case fb::PlacementKind::SHARD:
      return Placement::shard(p.dim());
    case fb::PlacementKind::STRIDED_SHARD:
      out.kind = Placement::Kind::kStridedShard;
      out.dim = p.dim();
      out.split_factor = p.split_factor();
      return out;
    case fb::PlacementKind::PARTIAL: {
      auto op = nrt::from_schema(p.reduce_op());
      if (!op) return make_error(ErrorCode::UnknownEnumValue, "placement: unknown reduce op");
      return Placement::partial(*op);
    }
  }
  return make_error(ErrorCode::UnknownEnumValue, "placement: unknown kind");
}

Result<Placements> from_schema(const std::vector<fb::Placement>& placements) {
  Placements out;
  for (const auto& p : placements) {
    NRT_TRY(placement, from_schema(p));
    out.push_back(*placement);
  }
  return out;
}

fb::Placement to_schema(const Placement& p) {
  fb::PlacementKind kind = fb::PlacementKind::REPLICATE;
  switch (p.kind) {
    case Placement::Kind::kReplicate: kind = fb::PlacementKind::REPLICATE; break;
    case Placement::Kind::kShard: kind = fb::PlacementKind::SHARD; break;
    case Placement::Kind::kStridedShard: kind = fb::PlacementKind::STRIDED_SHARD; break;
    case Placement::Kind::kPartial: kind = fb::PlacementKind::PARTIAL; break;
  }
  const bool sharded = p.is_shard();
  return fb::Placement(kind, nrt::to_schema(p.reduce_op), sharded ? p.dim : 0,
                       p.kind == Placement::Kind::kStridedShard ? p.split_factor : 0);
}

Mesh mesh_from_schema(const fb::DeviceMeshT& mesh, int64_t index) {
  Mesh out;
  out.name = mesh.name.empty() ? "mesh" + std::to_string(index) : mesh.name;
  out.shape = mesh.shape;
  out.dim_names = mesh.dim_names;
  out.ranks = mesh.ranks;
  return out;
}

}  // namespace nrt::dist
