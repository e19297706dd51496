// The distributed vocabulary: device meshes, process groups, and each DTensor's spec (mesh,
// placements, global shape). The sharding work grows these checks.
#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "serializer/schema_access.h"
#include "serializer/coordinate_zero_shard.h"
#include "serializer/verify_checks.h"

namespace nrt::verify {
namespace {

std::string sizes_text(const std::vector<int64_t>& sizes) {
  std::string text = "[";
  for (size_t i = 0; i < sizes.size(); ++i) text += (i ? ", " : "") + std::to_string(sizes[i]);
  return text + "]";
}

// The file stores a DTensor's local tensor as the shard of mesh coordinate (0, ..., 0), the
// largest (docs/FORMAT.md "DTensor values"): checked where every size is a literal.
Status check_coordinate_zero_shard(const fb::Value& value, const fb::DeviceMesh& mesh, const std::string& what,
                                   WorkBudget& budget) {
  const auto* spec = value.dtensor();
  const auto* local = value.tensor()->sizes();
  std::vector<int64_t> expected, stored;
  for (uint32_t d = 0; d < vector_size(spec->global_sizes()); ++d) {
    if (spec->global_sizes()->Get(d)->expr() != nullptr || local->Get(d)->expr() != nullptr) return {};
    expected.push_back(spec->global_sizes()->Get(d)->literal());
    stored.push_back(local->Get(d)->literal());
  }
  std::vector<fb::Placement> placements;
  for (uint32_t p = 0; p < vector_size(spec->placements()); ++p) {
    const auto* placement = spec->placements()->Get(p);
    if (placement->kind() == fb::PlacementKind::STRIDED_SHARD) {
      NRT_RETURN_IF_ERROR(budget.charge(static_cast<uint64_t>(placement->split_factor())));
    }
    placements.push_back(*placement);
  }
  const std::vector<int64_t> shape(mesh.shape()->begin(), mesh.shape()->end());
  expected = coordinate_zero_shard_sizes(std::move(expected), placements, shape);
  if (expected != stored) {
    return make_error(ErrorCode::InvalidShape, what + " stores a local tensor of sizes " + sizes_text(stored) +
                                                   "; the shard of mesh coordinate (0, ..., 0) of its global sizes "
                                                   "under its placements is " + sizes_text(expected) +
                                                   " (docs/FORMAT.md, DTensor values)");
  }
  return {};
}

}  // namespace

Status check_meshes(const fb::Program& program, WorkBudget& budget) {
  for (uint32_t m = 0; m < vector_size(program.meshes()); ++m) {
    const auto* mesh = program.meshes()->Get(m);
    if (Status s = budget.charge(1 + vector_size(mesh->shape()) + vector_size(mesh->dim_names()) + vector_size(mesh->ranks())); !s) {
      return s;
    }
    const std::string at = "mesh " + std::to_string(m) + " " + quoted(mesh->name()) + ": ";
    if (!known(mesh->device_type(), fb::EnumNameDeviceType)) {
      return make_error(ErrorCode::UnknownEnumValue, at + "device type " +
                                                         std::to_string(static_cast<int>(mesh->device_type())));
    }
    if (!elements_aligned(mesh->shape())) {
      return make_error(ErrorCode::FlatbufferInvalid, at + "its shape vector is not 8-byte aligned");
    }
    if (vector_size(mesh->shape()) == 0) return make_error(ErrorCode::InvalidMesh, at + "shape is empty");
    if (vector_size(mesh->shape()) > kMaxMeshDims) {
      return make_error(ErrorCode::InvalidMesh, at + "has " + std::to_string(vector_size(mesh->shape())) +
                                                    " dimensions; at most " + std::to_string(kMaxMeshDims) + " are supported");
    }
    uint64_t product = 1;
    for (uint32_t d = 0; d < vector_size(mesh->shape()); ++d) {
      const int64_t extent = mesh->shape()->Get(d);
      if (extent <= 0 || __builtin_mul_overflow(product, static_cast<uint64_t>(extent), &product)) {
        return make_error(ErrorCode::InvalidMesh, at + "dimension " + std::to_string(d) + " has extent " +
                                                      std::to_string(extent));
      }
    }
    if (product > kMaxMeshRanks) {
      return make_error(ErrorCode::InvalidMesh, at + "holds " + std::to_string(product) + " ranks; at most " +
                                                    std::to_string(kMaxMeshRanks) + " are supported");
    }
    if (product != vector_size(mesh->ranks())) {
      return make_error(ErrorCode::InvalidMesh, at + "shape holds " + std::to_string(product) + " ranks but " +
                                                    std::to_string(vector_size(mesh->ranks())) + " are listed");
    }
    if (vector_size(mesh->dim_names()) != 0 && vector_size(mesh->dim_names()) != vector_size(mesh->shape())) {
      return make_error(ErrorCode::InvalidMesh, at + std::to_string(vector_size(mesh->dim_names())) + " dim names for " +
                                                    std::to_string(vector_size(mesh->shape())) + " dimensions");
    }
    std::unordered_set<std::string_view> dim_names;
    for (uint32_t d = 0; d < vector_size(mesh->dim_names()); ++d) {
      const auto* name = mesh->dim_names()->Get(d);
      // torch's DeviceMesh refuses repeated names: a placement by dim name would be ambiguous.
      if (name != nullptr && name->size() > 0 && !dim_names.insert(name->string_view()).second) {
        return make_error(ErrorCode::InvalidMesh, at + "dim name '" + name->str() + "' names two dimensions");
      }
    }
    std::unordered_set<int32_t> seen;
    for (uint32_t r = 0; r < vector_size(mesh->ranks()); ++r) {
      const int32_t rank = mesh->ranks()->Get(r);
      if (rank < 0 || !seen.insert(rank).second) {
        return make_error(ErrorCode::InvalidMesh, at + "rank " + std::to_string(rank) + " at position " +
                                                      std::to_string(r) + " is negative or repeated");
      }
    }
  }
  return {};
}

Status check_process_groups(const fb::Program& program, WorkBudget& budget) {
  std::unordered_set<std::string_view> names;
  for (uint32_t g = 0; g < vector_size(program.process_groups()); ++g) {
    const auto* group = program.process_groups()->Get(g);
    NRT_RETURN_IF_ERROR(budget.charge(1 + vector_size(group->ranks())));
    const std::string at = "process group " + std::to_string(g) + " '" + group->name()->str() + "': ";
    if (!names.insert(group->name()->string_view()).second) {
      return make_error(ErrorCode::DuplicateName, at + "name is used by an earlier group");
    }
    // No ranks means "bound by name at load time" (a torch collective's group_name without a
    // size); a group derived from a mesh must list them.
    if (vector_size(group->ranks()) == 0 && group->mesh() >= 0) {
      return make_error(ErrorCode::InvalidProcessGroup, at + "is derived from a mesh but lists no ranks");
    }
    std::unordered_set<int32_t> seen;
    for (uint32_t r = 0; r < vector_size(group->ranks()); ++r) {
      const int32_t rank = group->ranks()->Get(r);
      if (rank < 0 || !seen.insert(rank).second) {
        return make_error(ErrorCode::InvalidProcessGroup,
                          at + "rank " + std::to_string(rank) + " at position " + std::to_string(r) +
                              " is negative or repeated");
      }
    }
    if (group->mesh() < 0) {
      if (group->mesh_dim() >= 0) {
        return make_error(ErrorCode::InvalidProcessGroup, at + "has a mesh dimension but no mesh");
      }
      continue;
    }
    if (static_cast<uint32_t>(group->mesh()) >= vector_size(program.meshes())) {
      return make_error(ErrorCode::MeshIndexOutOfRange, at + "names mesh " + std::to_string(group->mesh()) + " of " +
                                                            std::to_string(vector_size(program.meshes())));
    }
    const auto* mesh = program.meshes()->Get(static_cast<uint32_t>(group->mesh()));
    if (group->mesh_dim() < 0 || static_cast<uint32_t>(group->mesh_dim()) >= vector_size(mesh->shape())) {
      return make_error(ErrorCode::InvalidProcessGroup, at + "mesh dimension " + std::to_string(group->mesh_dim()) +
                                                            " is outside a " + std::to_string(vector_size(mesh->shape())) +
                                                            "-D mesh");
    }
    if (static_cast<int64_t>(vector_size(group->ranks())) != mesh->shape()->Get(static_cast<uint32_t>(group->mesh_dim()))) {
      return make_error(ErrorCode::InvalidProcessGroup,
                        at + std::to_string(vector_size(group->ranks())) + " ranks for a mesh dimension of extent " +
                            std::to_string(mesh->shape()->Get(static_cast<uint32_t>(group->mesh_dim()))));
    }
    NRT_RETURN_IF_ERROR(budget.charge(vector_size(mesh->ranks())));
    std::unordered_set<int32_t> mesh_ranks;
    for (int32_t rank : elements(mesh->ranks())) mesh_ranks.insert(rank);
    for (int32_t rank : elements(group->ranks())) {
      if (!mesh_ranks.count(rank)) {
        return make_error(ErrorCode::InvalidProcessGroup, at + "rank " + std::to_string(rank) + " is not in its mesh");
      }
    }
  }
  return {};
}

// Messages carry no place prefix: the graph checker adds its own.
Status check_dtensor_spec(const fb::Program& program, const fb::Value& value, const std::string& what, WorkBudget& budget) {
  const auto* spec = value.dtensor();
  if (spec == nullptr) return make_error(ErrorCode::MissingTypeInfo, what + " is a DTensor without a DTensorSpec");
  if (spec->mesh() >= vector_size(program.meshes())) {
    return make_error(ErrorCode::MeshIndexOutOfRange, what + " names mesh " + std::to_string(spec->mesh()) + " of " +
                                                    std::to_string(vector_size(program.meshes())));
  }
  const auto* mesh = program.meshes()->Get(spec->mesh());
  const uint32_t mesh_dims = vector_size(mesh->shape());
  NRT_RETURN_IF_ERROR(budget.charge(1 + vector_size(spec->placements())));
  if (vector_size(spec->placements()) != mesh_dims) {
    return make_error(ErrorCode::InvalidPlacement, what + " has " + std::to_string(vector_size(spec->placements())) +
                                                 " placements for a " + std::to_string(mesh_dims) + "-D mesh");
  }
  // The global shape, when recorded, has the local shard's rank; its strides, when recorded, one
  // per global size.
  const uint32_t rank = vector_size(value.tensor()->sizes());
  const uint32_t global_rank = vector_size(spec->global_sizes());
  NRT_RETURN_IF_ERROR(budget.charge(global_rank + vector_size(spec->global_strides())));
  if (spec->global_sizes() && global_rank != rank) {
    return make_error(ErrorCode::InvalidShape, what + " has " + std::to_string(global_rank) +
                                             " global sizes for a local tensor of rank " + std::to_string(rank));
  }
  for (uint32_t d = 0; d < global_rank; ++d) {
    if (std::string problem = extent_problem(spec->global_sizes()->Get(d)); !problem.empty()) {
      return make_error(ErrorCode::InvalidShape, what + " global size " + std::to_string(d) + " " + problem);
    }
  }
  if (spec->global_strides() && vector_size(spec->global_strides()) != global_rank) {
    return make_error(ErrorCode::InvalidShape, what + " has " + std::to_string(global_rank) + " global sizes but " +
                                             std::to_string(vector_size(spec->global_strides())) + " global strides");
  }
  for (uint32_t p = 0; p < mesh_dims; ++p) {
    const auto* placement = spec->placements()->Get(p);
    const std::string at = what + " placement " + std::to_string(p) + ": ";
    const fb::PlacementKind kind = placement->kind();
    switch (kind) {
      case fb::PlacementKind::REPLICATE:
        break;
      case fb::PlacementKind::STRIDED_SHARD:
        if (placement->split_factor() < 1) {
          return make_error(ErrorCode::InvalidPlacement, at + "split factor " + std::to_string(placement->split_factor()) +
                                                       " must be at least 1");
        }
        [[fallthrough]];
      case fb::PlacementKind::SHARD:
        if (placement->dim() < 0 || static_cast<uint32_t>(placement->dim()) >= rank) {
          return make_error(ErrorCode::InvalidPlacement, at + "shard dim " + std::to_string(placement->dim()) +
                                                       " is outside a tensor of rank " + std::to_string(rank));
        }
        break;
      case fb::PlacementKind::PARTIAL:
        if (!known(placement->reduce_op(), fb::EnumNameReduceOp)) {
          return make_error(ErrorCode::UnknownEnumValue,
                      at + "reduce op " + std::to_string(static_cast<int>(placement->reduce_op())) + " is unknown");
        }
        break;
      default:
        return make_error(ErrorCode::UnknownEnumValue,
                    at + "kind " + std::to_string(static_cast<int>(kind)) + " is unknown");
    }
    // A struct has no absent fields: a field its kind does not use holds its zero value (SUM for
    // the reduce op), so a placement reads one way only. A non-PARTIAL placement whose reduce op
    // is SUM is indistinguishable from one without, and is accepted.
    auto unused = [&](const char* field, int64_t held, const char* owners) {
      return make_error(ErrorCode::InvalidPlacement, at + fb::EnumNamePlacementKind(kind) + " placement carries " + field +
                                                   " " + std::to_string(held) + ", which only " + owners +
                                                   " placements use");
    };
    const bool sharded = kind == fb::PlacementKind::SHARD || kind == fb::PlacementKind::STRIDED_SHARD;
    if (kind != fb::PlacementKind::PARTIAL && placement->reduce_op() != fb::ReduceOp::SUM) {
      return unused("reduce op", static_cast<int>(placement->reduce_op()), "PARTIAL");
    }
    if (!sharded && placement->dim() != 0) return unused("dim", placement->dim(), "SHARD and STRIDED_SHARD");
    if (kind != fb::PlacementKind::STRIDED_SHARD && placement->split_factor() != 0) {
      return unused("split factor", placement->split_factor(), "STRIDED_SHARD");
    }
  }
  if (spec->global_sizes()) return check_coordinate_zero_shard(value, *mesh, what, budget);
  return {};
}

}  // namespace nrt::verify
