#include "executor/dtensor/merge_rank_programs.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>

#include "core/schema_enums.h"
#include "executor/dtensor/schema_args.h"
#include "executor/dtensor/schema_placements.h"
#include "executor/dtensor/shard_layout.h"
#include "serializer/program_diff.h"

namespace nrt::dist {
namespace {

std::string sizes_text(const std::vector<int64_t>& s) {
  std::string t;
  for (int64_t x : s) t += (t.empty() ? "" : ", ") + std::to_string(x);
  return "[" + t + "]";
}

// The first difference diff_programs finds apart from weights' bytes and local sizes.
std::optional<std::string> structural_difference(const ProgramFile& a, const ProgramFile& b) {
  const ProgramDiff d = diff_programs(a, b);
  if (!d.graphs_removed.empty()) return "graph '" + d.graphs_removed[0] + "' is missing";
  if (!d.graphs_added.empty()) return "graph '" + d.graphs_added[0] + "' is extra";
  for (const auto& g : d.graphs) {
    if (!g.interface_changes.empty()) return "graph '" + g.name + "': " + g.interface_changes[0];
    if (!g.removed_nodes.empty()) return "graph '" + g.name + "': node " + g.removed_nodes[0] + " is missing";
    if (!g.added_nodes.empty()) return "graph '" + g.name + "': node " + g.added_nodes[0] + " is extra";
    if (!g.changed_nodes.empty()) {
      const auto& c = g.changed_nodes[0];
      return "graph '" + g.name + "': node " + c.a_node + ": " + (c.changes.empty() ? "changed" : c.changes[0]);
    }
  }
  if (!d.mesh_changes.empty()) return "mesh " + d.mesh_changes[0];
  if (!d.group_changes.empty()) return "process group " + d.group_changes[0];
  for (const auto& w : d.weights) {
    if (w.change == "added" || w.change == "removed") return "weight '" + w.fqn + "' " + (w.change == "added" ? "is extra" : "is missing");
  }
  return std::nullopt;
}

// The coordinate every DTensor shard of a program was saved at; nullopt when it holds none.
Result<std::optional<std::vector<int64_t>>> coordinate_of(const fb::ProgramT& p, const std::string& name) {
  std::optional<std::vector<int64_t>> found;
  for (const auto& w : p.weights) {
    if (w->shard_coordinate.empty()) continue;
    if (found && *found != w->shard_coordinate) {
      return make_error(ErrorCode::InvalidArgument, name + ": weights of two mesh coordinates, " + coordinate_text(*found) +
                                                        " and " + coordinate_text(w->shard_coordinate));
    }
    found = w->shard_coordinate;
  }
  return found;
}

// The DTensorSpec of the entry-graph input that reads weight `fqn`.
const fb::DTensorSpecT* spec_of_weight(const fb::ProgramT& p, const std::string& fqn) {
  for (uint32_t e : p.entry_points) {
    const auto& graph = *p.graphs[e];
    if (!graph.signature) continue;
    for (const auto& input : graph.signature->inputs) {
      if (input->target != fqn || input->value < 0 || static_cast<size_t>(input->value) >= graph.values.size()) continue;
      const auto& value = *graph.values[static_cast<size_t>(input->value)];
      if (value.dtensor) return value.dtensor.get();
    }
  }
  return nullptr;
}

// Visits every element of a strided view in row-major order: (its flat element offset, its index).
template <typename F>
void for_each_element(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, int64_t offset, F&& f) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  std::vector<int64_t> index(sizes.size(), 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t at = offset;
    for (size_t d = 0; d < sizes.size(); ++d) at += index[d] * strides[d];
    f(at, index);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
}

struct GlobalTensor {
  std::vector<int64_t> sizes;
  std::vector<uint8_t> bytes;
};

// Weight `fqn`'s global tensor from every archive's local shard, placed at its coordinate's region.
Result<GlobalTensor> assemble(const std::string& fqn, std::span<const RankProgram> ranks,
                              const std::vector<std::unique_ptr<fb::ProgramT>>& programs,
                              const std::vector<std::vector<int64_t>>& coordinates, const Mesh& mesh) {
  const fb::DTensorSpecT* spec = spec_of_weight(*programs[0], fqn);
  if (spec == nullptr) return make_error(ErrorCode::InvalidArgument, ranks[0].name + ": weight '" + fqn + "' is read by no DTensor input");
  auto global = literal_sizes(spec->global_sizes);
  if (!global) return make_error(ErrorCode::NotSupported, "weight '" + fqn + "': symbolic global sizes");
  NRT_TRY(placements, from_schema(spec->placements));
  GlobalTensor out{*global, {}};
  int64_t numel = 1;
  for (int64_t s : *global) numel *= s;
  const auto global_strides = dense_strides(*global);
  std::vector<int32_t> written(static_cast<size_t>(numel), -1);  // the archive that wrote each element
  size_t element = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const fb::WeightTensorT* local = nullptr;
    for (const auto& w : programs[i]->weights) {
      if (w->fqn == fqn) local = w.get();
    }
    if (local == nullptr || local->shard_coordinate.empty()) {
      return make_error(ErrorCode::InvalidArgument, ranks[i].name + ": weight '" + fqn + "' is not a DTensor shard there");
    }
    NRT_TRY(region, shard_region(*global, *placements, mesh.shape, coordinates[i]));
    if (!region->contiguous()) {
      return make_error(ErrorCode::NotSupported, "weight '" + fqn + "': merging _StridedShard shards is not supported");
    }
    auto sizes = literal_sizes(local->meta->sizes);
    auto strides = literal_sizes(local->meta->strides);
    if (!sizes || !strides || *sizes != region->sizes) {
      return make_error(ErrorCode::InvalidShape,
                        ranks[i].name + ": weight '" + fqn + "' holds a shard of sizes " + sizes_text(sizes ? *sizes : std::vector<int64_t>{}) +
                            " but mesh coordinate " + coordinate_text(coordinates[i]) + " holds " +
                            sizes_text(region->sizes) + " of the global " + sizes_text(*global) +
                            ": the shards do not tile the global tensor");
    }
    element = element_size(local->meta->dtype);
    if (out.bytes.empty()) out.bytes.resize(static_cast<size_t>(numel) * element);
    const auto storage = ranks[i].file->storage_bytes(local->storage);
    const int64_t offset = local->meta->storage_offset ? local->meta->storage_offset->literal : 0;
    Status status;
    for_each_element(*sizes, *strides, offset, [&](int64_t at, const std::vector<int64_t>& index) {
      if (!status) return;
      int64_t to = 0;
      for (size_t d = 0; d < index.size(); ++d) to += (region->offsets[d] + index[d]) * global_strides[d];
      uint8_t* dst = out.bytes.data() + static_cast<size_t>(to) * element;
      const uint8_t* src = storage.data() + static_cast<size_t>(at) * element;
      int32_t& by = written[static_cast<size_t>(to)];
      if (by >= 0 && std::memcmp(dst, src, element) != 0) {
        status = make_error(ErrorCode::InvalidArgument, ranks[i].name + " and " + ranks[static_cast<size_t>(by)].name +
                                                            " hold different values of replicated weight '" + fqn + "'");
        return;
      }
      std::memcpy(dst, src, element);
      by = static_cast<int32_t>(i);
    });
    NRT_RETURN_IF_ERROR(status);
  }
  for (int32_t by : written) {
    if (by < 0) return make_error(ErrorCode::InvalidShape, "weight '" + fqn + "': the shards do not cover the global tensor " + sizes_text(*global));
  }
  return out;
}

// Storages no weight views are dropped; weights' indices follow.
void drop_unused_storages(ProgramWithWeights& p) {
  std::vector<int64_t> remap(p.storages.size(), -1);
  for (const auto& w : p.program.weights) remap[w->storage] = 0;
  std::vector<std::vector<uint8_t>> kept;
  std::vector<std::unique_ptr<fb::StorageT>> kept_tables;
  for (size_t s = 0; s < p.storages.size(); ++s) {
    if (remap[s] < 0) continue;
    remap[s] = static_cast<int64_t>(kept.size());
    kept.push_back(std::move(p.storages[s]));
    kept_tables.push_back(std::move(p.program.storages[s]));
  }
  for (auto& w : p.program.weights) w->storage = static_cast<uint32_t>(remap[w->storage]);
  p.storages = std::move(kept);
  p.program.storages = std::move(kept_tables);
}

}  // namespace

Result<ProgramWithWeights> merge_rank_programs(std::span<const RankProgram> ranks) {
  if (ranks.empty()) return make_error(ErrorCode::InvalidArgument, "no per-rank programs to merge");
  std::vector<std::unique_ptr<fb::ProgramT>> programs;
  std::vector<std::vector<int64_t>> coordinates;
  for (const auto& r : ranks) {
    programs.emplace_back(r.file->program().UnPack());
    NRT_TRY(coordinate, coordinate_of(*programs.back(), r.name));
    if (!*coordinate) {
      return make_error(ErrorCode::InvalidArgument, r.name + ": holds no DTensor shard (not one rank's archive of a "
                                                             "DTensor program; convert it alone)");
    }
    coordinates.push_back(**coordinate);
  }
  const fb::ProgramT& base = *programs[0];
  for (size_t i = 1; i < ranks.size(); ++i) {
    if (auto difference = structural_difference(*ranks[0].file, *ranks[i].file)) {
      return make_error(ErrorCode::InvalidArgument, ranks[i].name + " differs from " + ranks[0].name + " apart from weights: " +
                                                        *difference);
    }
  }
  // The mesh every DTensor weight lives on, and which archive holds each coordinate.
  const fb::DTensorSpecT* any_spec = nullptr;
  for (const auto& w : base.weights) {
    if (!w->shard_coordinate.empty() && !any_spec) any_spec = spec_of_weight(base, w->fqn);
  }
  if (any_spec == nullptr || any_spec->mesh >= base.meshes.size()) {
    return make_error(ErrorCode::InvalidArgument, ranks[0].name + ": its DTensor weights are read by no DTensor input");
  }
  const fb::DeviceMeshT& mesh_t = *base.meshes[any_spec->mesh];
  const Mesh mesh = mesh_from_schema(mesh_t, any_spec->mesh);
  std::map<std::vector<int64_t>, size_t> holder;
  for (size_t i = 0; i < ranks.size(); ++i) {
    auto [it, added] = holder.emplace(coordinates[i], i);
    if (!added) {
      return make_error(ErrorCode::InvalidArgument, ranks[i].name + " and " + ranks[it->second].name +
                                                        " both hold the shards of mesh coordinate " +
                                                        coordinate_text(coordinates[i]));
    }
  }
  for (int64_t flat = 0; flat < static_cast<int64_t>(mesh.ranks.size()); ++flat) {
    const auto c = mesh.coordinate_at(flat);
    if (!holder.count(c)) {
      return make_error(ErrorCode::InvalidArgument,
                        "no archive holds rank " + std::to_string(mesh.ranks[static_cast<size_t>(flat)]) +
                            " (mesh coordinate " + coordinate_text(c) + "); the mesh has " +
                            std::to_string(mesh.ranks.size()) + " ranks and " + std::to_string(ranks.size()) +
                            " archives were given");
    }
  }
  if (holder.size() != mesh.ranks.size()) {
    return make_error(ErrorCode::InvalidArgument, "an archive's coordinate lies outside mesh '" + mesh.name + "'");
  }

  // Every DTensor weight's global tensor, assembled from the archives' shards.
  std::vector<std::optional<GlobalTensor>> globals(base.weights.size());
  for (size_t w = 0; w < base.weights.size(); ++w) {
    if (base.weights[w]->shard_coordinate.empty()) continue;
    NRT_TRY(global_tensor, assemble(base.weights[w]->fqn, ranks, programs, coordinates, mesh));
    globals[w] = std::move(*global_tensor);
  }
  // The merged program: the first archive's, each DTensor weight replaced by its global tensor in
  // a storage of its own (the local shards' storages are dropped when nothing else views them).
  ProgramWithWeights out;
  out.program = std::move(*programs[0]);
  for (uint32_t s = 0; s < out.program.storages.size(); ++s) {
    const auto bytes = ranks[0].file->storage_bytes(s);
    out.storages.emplace_back(bytes.begin(), bytes.end());
  }
  for (size_t w = 0; w < out.program.weights.size(); ++w) {
    if (!globals[w]) continue;
    auto& weight = *out.program.weights[w];
    weight.storage = static_cast<uint32_t>(out.storages.size());
    out.storages.push_back(std::move(globals[w]->bytes));
    out.program.storages.push_back(std::make_unique<fb::StorageT>());
    weight.meta->sizes = literal_dims(globals[w]->sizes);
    weight.meta->strides = literal_dims(dense_strides(globals[w]->sizes));
    weight.meta->storage_offset.reset();
    weight.shard_coordinate.clear();
  }
  // torch's per-rank names of the mesh dims' groups (metadata each rank's import recorded).
  for (size_t i = 1; i < programs.size(); ++i) {
    for (const auto& kv : programs[i]->metadata) {
      const bool known = std::any_of(out.program.metadata.begin(), out.program.metadata.end(),
                                     [&](const auto& mine) { return mine->key == kv->key; });
      if (!known) out.program.metadata.push_back(std::make_unique<fb::KeyValueT>(*kv));
    }
  }
  drop_unused_storages(out);
  return out;
}

Result<std::vector<int32_t>> dtensor_weight_ranks(const ProgramFile& file) {
  const auto program = std::unique_ptr<fb::ProgramT>(file.program().UnPack());
  for (const auto& weight : program->weights) {
    const fb::DTensorSpecT* spec = spec_of_weight(*program, weight->fqn);
    if (spec != nullptr && spec->mesh < program->meshes.size()) return program->meshes[spec->mesh]->ranks;
  }
  return make_error(ErrorCode::InvalidArgument, "the program has no DTensor weight: it has no per-rank form");
}

Result<ProgramWithWeights> rank_program(const ProgramFile& file, int32_t rank) {
  ProgramWithWeights out;
  out.program = std::move(*std::unique_ptr<fb::ProgramT>(file.program().UnPack()));
  for (uint32_t s = 0; s < out.program.storages.size(); ++s) {
    const auto bytes = file.storage_bytes(s);
    out.storages.emplace_back(bytes.begin(), bytes.end());
  }
  const size_t stored = out.storages.size();
  for (auto& weight : out.program.weights) {
    const fb::DTensorSpecT* spec = spec_of_weight(out.program, weight->fqn);
    if (spec == nullptr) continue;
    if (!weight->shard_coordinate.empty()) {
      return make_error(ErrorCode::InvalidArgument, "weight '" + weight->fqn + "' already holds one rank's shard");
    }
    if (spec->mesh >= out.program.meshes.size()) return make_error(ErrorCode::MeshIndexOutOfRange, "weight '" + weight->fqn + "'");
    const Mesh mesh = mesh_from_schema(*out.program.meshes[spec->mesh], spec->mesh);
    auto coordinate = mesh.coordinate_of(rank);
    if (!coordinate) {
      return make_error(ErrorCode::InvalidArgument, "mesh '" + mesh.name + "' does not hold rank " + std::to_string(rank));
    }
    auto global = literal_sizes(spec->global_sizes);
    auto sizes = literal_sizes(weight->meta->sizes);
    auto strides = literal_sizes(weight->meta->strides);
    if (!global || !sizes || !strides || *sizes != *global) {
      return make_error(ErrorCode::InvalidArgument, "weight '" + weight->fqn + "' is not stored as its global tensor");
    }
    NRT_TRY(placements, from_schema(spec->placements));
    NRT_TRY(region, shard_region(*global, *placements, mesh.shape, *coordinate));
    if (!region->contiguous()) {
      return make_error(ErrorCode::NotSupported, "weight '" + weight->fqn + "': a _StridedShard shard has no per-rank form yet");
    }
    const size_t element = element_size(weight->meta->dtype);
    const int64_t offset = weight->meta->storage_offset ? weight->meta->storage_offset->literal : 0;
    const auto& source = out.storages[weight->storage];
    std::vector<uint8_t> local;
    // Element (i) of the shard is element (offsets + i) of the global view.
    int64_t base = offset;
    for (size_t d = 0; d < region->offsets.size(); ++d) {
      if (region->sizes[d] > 0) base += region->offsets[d] * (*strides)[d];
    }
    for_each_element(region->sizes, *strides, base, [&](int64_t at, const std::vector<int64_t>&) {
      const uint8_t* src = source.data() + static_cast<size_t>(at) * element;
      local.insert(local.end(), src, src + element);
    });
    weight->storage = static_cast<uint32_t>(out.storages.size());
    out.storages.push_back(std::move(local));
    out.program.storages.push_back(std::make_unique<fb::StorageT>());
    weight->meta->sizes = literal_dims(region->sizes);
    weight->meta->strides = literal_dims(dense_strides(region->sizes));
    weight->meta->storage_offset.reset();
    weight->shard_coordinate = *coordinate;
  }
  if (out.storages.size() == stored) {
    return make_error(ErrorCode::InvalidArgument, "the program has no DTensor weight: it has no per-rank form");
  }
  drop_unused_storages(out);
  return out;
}

}  // namespace nrt::dist
