#include "serializer/torch_export/dtensor_parameters.h"

#include <algorithm>
#include <set>

#include "serializer/coordinate_zero_shard.h"

namespace nrt::torch_export {
namespace {

std::vector<std::unique_ptr<fb::SymDimT>> literal_dims(const std::vector<int64_t>& values) {
  std::vector<std::unique_ptr<fb::SymDimT>> dims;
  for (int64_t v : values) {
    dims.push_back(std::make_unique<fb::SymDimT>());
    dims.back()->literal = v;
  }
  return dims;
}

std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;) strides[d - 1] = strides[d] * std::max<int64_t>(sizes[d], 1);
  return strides;
}

// The ranks of the group along mesh dim `dim` through coordinate 0 (row-major mesh).
std::vector<int32_t> coordinate_zero_group(const SavedDTensorSpec& spec, size_t dim) {
  int64_t stride = 1;
  for (size_t d = spec.mesh_shape.size(); d-- > dim + 1;) stride *= spec.mesh_shape[d];
  std::vector<int32_t> ranks;
  for (int64_t k = 0; k < spec.mesh_shape[dim]; ++k) ranks.push_back(spec.mesh_ranks[static_cast<size_t>(k * stride)]);
  return ranks;
}

}  // namespace

std::string dim_group_names_key(int64_t rank) { return "torch.dtensor/dim_group_names/rank" + std::to_string(rank); }

uint32_t mesh_for(const SavedDTensorSpec& spec, fb::ProgramT* program) {
  const fb::DeviceType device = spec.device_type;
  for (uint32_t m = 0; m < program->meshes.size(); ++m) {
    const auto& mesh = *program->meshes[m];
    if (mesh.shape == spec.mesh_shape && mesh.ranks == spec.mesh_ranks && mesh.dim_names == spec.dim_names &&
        mesh.device_type == device) {
      return m;
    }
  }
  auto mesh = std::make_unique<fb::DeviceMeshT>();
  mesh->name = program->meshes.empty() ? "mesh" : "mesh" + std::to_string(program->meshes.size());
  mesh->device_type = device;
  mesh->shape = spec.mesh_shape;
  mesh->dim_names = spec.dim_names;
  mesh->ranks = spec.mesh_ranks;
  program->meshes.push_back(std::move(mesh));
  return static_cast<uint32_t>(program->meshes.size() - 1);
}

Status apply_dtensor_parameters(const DTensorParameters& parameters, fb::ProgramT* program) {
  std::set<const fb::ProcessGroupT*> renamed;
  for (const auto& [fqn, spec] : parameters) {
    const uint32_t mesh = mesh_for(spec, program);
    if (!spec.dim_group_names.empty()) {
      std::string names;
      for (const auto& n : spec.dim_group_names) names += (names.empty() ? "" : ",") + n;
      const std::string key = dim_group_names_key(spec.rank);
      const bool known = std::any_of(program->metadata.begin(), program->metadata.end(),
                                     [&](const auto& kv) { return kv->key == key; });
      if (!known) {
        auto kv = std::make_unique<fb::KeyValueT>();
        kv->key = key;
        kv->value = names;
        program->metadata.push_back(std::move(kv));
      }
    }
    // torch names each mesh dim's group alike on every rank: a collective naming it runs over
    // this rank's group along that dim.
    for (size_t d = 0; d < spec.dim_group_names.size(); ++d) {
      for (auto& group : program->process_groups) {
        if (group->name != spec.dim_group_names[d] || renamed.count(group.get())) continue;
        renamed.insert(group.get());
        if (group->mesh >= 0 && (group->mesh != static_cast<int32_t>(mesh) || group->mesh_dim != static_cast<int32_t>(d))) {
          return make_error(ErrorCode::InvalidProcessGroup, "process group '" + group->name +
                                                                "' is the group of two different mesh dims");
        }
        group->mesh = static_cast<int32_t>(mesh);
        group->mesh_dim = static_cast<int32_t>(d);
        group->ranks = coordinate_zero_group(spec, d);
        // torch numbers groups per rank (the tp group of a 2x2 mesh is '4' on ranks 0-1 and '3'
        // on ranks 2-3): the group is named by its mesh dim, so every rank's program names it alike.
        const auto& mesh_name = program->meshes[mesh]->name;
        const std::string base = mesh_name + "." + (d < spec.dim_names.size() ? spec.dim_names[d] : std::to_string(d));
        std::string name = base;
        for (int k = 1; std::any_of(program->process_groups.begin(), program->process_groups.end(),
                                    [&](const auto& other) { return other.get() != group.get() && other->name == name; });
             ++k) {
          name = base + "~" + std::to_string(k);
        }
        group->name = name;
      }
    }
    for (const uint32_t e : program->entry_points) {
      auto& graph = *program->graphs[e];
      if (!graph.signature) continue;
      for (const auto& input : graph.signature->inputs) {
        const bool weight = input->kind == fb::InputKind::PARAMETER || input->kind == fb::InputKind::BUFFER;
        if (!weight || input->target != fqn || input->value < 0 ||
            static_cast<size_t>(input->value) >= graph.values.size()) {
          continue;
        }
        auto& value = *graph.values[static_cast<size_t>(input->value)];
        if (value.kind != fb::ValueKind::TENSOR || !value.tensor) {
          return make_error(ErrorCode::InvalidArgument, "graph '" + graph.name + "' input '" + value.name +
                                                            "' of DTensor parameter '" + fqn + "' is not a tensor");
        }
        std::vector<int64_t> recorded;
        for (const auto& dim : value.tensor->sizes) {
          if (!dim->expr.empty()) return make_error(ErrorCode::NotSupported, "DTensor parameter '" + fqn + "' with symbolic sizes");
          recorded.push_back(dim->literal);
        }
        if (recorded != spec.global_sizes) {
          return make_error(ErrorCode::InvalidShape, "graph '" + graph.name + "' input '" + value.name + "' records other sizes than DTensor parameter '" + fqn + "''s global sizes");
        }
        auto dtensor = std::make_unique<fb::DTensorSpecT>();
        dtensor->mesh = mesh;
        dtensor->placements = spec.placements;
        dtensor->global_sizes = literal_dims(spec.global_sizes);
        dtensor->global_strides = literal_dims(spec.global_strides);
        const auto local = coordinate_zero_shard_sizes(spec.global_sizes, spec.placements, spec.mesh_shape);
        value.kind = fb::ValueKind::DTENSOR;
        value.dtensor = std::move(dtensor);
        value.tensor->sizes = literal_dims(local);
        value.tensor->strides = literal_dims(dense_strides(local));
      }
    }
  }
  return {};
}

}  // namespace nrt::torch_export
