#include "serializer/torch_export/export_pt2.h"

#include <charconv>
#include <map>
#include <optional>
#include <unordered_map>

#include "serializer/checksum.h"
#include "serializer/torch_export/dtensor_parameters.h"
#include "serializer/torch_export/export_json.h"
#include "serializer/torch_export/torch_saved_tensor.h"
#include "serializer/torch_export/payload_config.h"
#include "serializer/torch_export/pt2_archive.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {
namespace {

enum class Payload { kWeights, kConstants };

// Which config each weight (by fqn) belongs to, from the entry graph's signature.
std::unordered_map<std::string, Payload> payload_kinds(const fb::GraphT& graph) {
  std::unordered_map<std::string, Payload> kinds;
  if (!graph.signature) return kinds;
  for (const auto& spec : graph.signature->inputs) {
    switch (spec->kind) {
      case fb::InputKind::PARAMETER:
        kinds.emplace(spec->target, Payload::kWeights);
        break;
      case fb::InputKind::BUFFER:
        kinds.emplace(spec->target, spec->persistent ? Payload::kWeights : Payload::kConstants);
        break;
      case fb::InputKind::TENSOR_CONSTANT:
        kinds.emplace(spec->target, Payload::kConstants);
        break;
      default:
        break;
    }
  }
  return kinds;
}

std::unique_ptr<fb::TensorMetaT> copy_meta(const fb::TensorMetaT& meta) { return std::make_unique<fb::TensorMetaT>(meta); }

// 40 decimal digits from the archive's contents, in the spirit of PyTorch's serialization id.
std::string serialization_id(const std::vector<Pt2Entry>& entries) {
  std::string all;
  for (const auto& entry : entries) {
    const auto sum = checksum_of(entry.bytes);
    all.append(reinterpret_cast<const char*>(&sum), sizeof sum);
  }
  const auto sum = checksum_of({reinterpret_cast<const uint8_t*>(all.data()), all.size()});
  std::string id;
  for (const uint64_t half : {sum.low(), sum.high()}) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, half).ptr;
    id += std::string(20 - static_cast<size_t>(end - digits), '0') + std::string(digits, end);
  }
  return id;
}

// A per-rank program (imported from one rank's archive, or cut by rank_program): its DTensor
// weights hold this rank's shard. torch's view of it: each DTensor value a plain tensor of its
// global shape (as torch's graph records a DTensor parameter), each mesh-dim group under the name
// torch gave it on this rank, and per DTensor weight what its torch.save record needs.
struct RankView {
  fb::ProgramT program;
  std::map<std::string, SavedDTensorSpec> dtensors;  // fqn -> spec
};

Result<std::optional<RankView>> rank_view(const fb::ProgramT& original) {
  std::vector<int64_t> coordinate;
  for (const auto& w : original.weights) {
    if (w->shard_coordinate.empty()) continue;
    if (!coordinate.empty() && coordinate != w->shard_coordinate) {
      return make_error(ErrorCode::InvalidArgument, "weights of two mesh coordinates in one program");
    }
    coordinate = w->shard_coordinate;
  }
  if (coordinate.empty()) return std::optional<RankView>();
  flatbuffers::FlatBufferBuilder builder;
  fb::FinishProgramBuffer(builder, fb::Program::Pack(builder, &original));
  RankView view;
  view.program = std::move(*std::unique_ptr<fb::ProgramT>(fb::GetProgram(builder.GetBufferPointer())->UnPack()));
  fb::ProgramT& p = view.program;
  std::optional<uint32_t> mesh_index;
  int64_t rank = -1;
  std::vector<std::string> group_names;
  for (const uint32_t e : p.entry_points) {
    auto& graph = *p.graphs[e];
    std::map<int32_t, std::string> target_of_value;
    if (graph.signature) {
      for (const auto& in : graph.signature->inputs) target_of_value[in->value] = in->target;
    }
    for (size_t v = 0; v < graph.values.size(); ++v) {
      auto& value = *graph.values[v];
      if (value.kind != fb::ValueKind::DTENSOR || !value.dtensor || !value.tensor) continue;
      const auto& spec = *value.dtensor;
      if (spec.mesh >= p.meshes.size()) return make_error(ErrorCode::MeshIndexOutOfRange, "value '" + value.name + "'");
      const auto& mesh = *p.meshes[spec.mesh];
      if (rank < 0) {
        int64_t flat = 0;
        for (size_t d = 0; d < coordinate.size() && d < mesh.shape.size(); ++d) flat = flat * mesh.shape[d] + coordinate[d];
        if (coordinate.size() != mesh.shape.size() || flat >= static_cast<int64_t>(mesh.ranks.size())) {
          return make_error(ErrorCode::InvalidArgument, "the weights' shard coordinate lies outside mesh '" + mesh.name + "'");
        }
        rank = mesh.ranks[static_cast<size_t>(flat)];
        mesh_index = spec.mesh;
        const std::string key = dim_group_names_key(rank);
        for (const auto& kv : p.metadata) {
          if (kv->key != key) continue;
          for (size_t at = 0; at <= kv->value.size();) {
            const size_t comma = std::min(kv->value.find(',', at), kv->value.size());
            group_names.push_back(kv->value.substr(at, comma - at));
            at = comma + 1;
          }
        }
        if (group_names.size() != mesh.shape.size()) {
          // No names torch gave (a program nrt made): the groups' own names, else <mesh>.<dim>.
          group_names.clear();
          for (size_t d = 0; d < mesh.shape.size(); ++d) {
            std::string name = mesh.name + "." + (d < mesh.dim_names.size() ? mesh.dim_names[d] : std::to_string(d));
            for (const auto& g : p.process_groups) {
              if (g->mesh == static_cast<int32_t>(spec.mesh) && g->mesh_dim == static_cast<int32_t>(d)) name = g->name;
            }
            group_names.push_back(name);
          }
        }
      }
      auto target = target_of_value.find(static_cast<int32_t>(v));
      if (target != target_of_value.end()) {
        SavedDTensorSpec saved;
        saved.placements = spec.placements;
        for (const auto& d : spec.global_sizes) saved.global_sizes.push_back(d->literal);
        for (const auto& d : spec.global_strides) saved.global_strides.push_back(d->literal);
        saved.mesh_shape = mesh.shape;
        saved.mesh_ranks = mesh.ranks;
        saved.dim_names = mesh.dim_names;
        saved.dim_group_names = group_names.size() == mesh.shape.size() ? group_names : std::vector<std::string>{};
        saved.device_type = mesh.device_type;
        saved.rank = rank;
        saved.coordinate = coordinate;
        view.dtensors[target->second] = std::move(saved);
      }
      // torch records a DTensor parameter's graph value with its global shape.
      value.kind = fb::ValueKind::TENSOR;
      value.tensor->sizes.clear();
      value.tensor->strides.clear();
      for (const auto& d : spec.global_sizes) value.tensor->sizes.push_back(std::make_unique<fb::SymDimT>(*d));
      for (const auto& d : spec.global_strides) value.tensor->strides.push_back(std::make_unique<fb::SymDimT>(*d));
      value.dtensor.reset();
    }
  }
  for (auto& group : p.process_groups) {
    if (mesh_index && group->mesh == static_cast<int32_t>(*mesh_index) && group->mesh_dim >= 0 &&
        static_cast<size_t>(group->mesh_dim) < group_names.size()) {
      group->name = group_names[static_cast<size_t>(group->mesh_dim)];
    }
  }
  return std::optional<RankView>(std::move(view));
}

}  // namespace

Result<std::vector<uint8_t>> export_pt2(const ProgramWithWeights& input, const Pt2ExportOptions& options) {
  NRT_TRY(view, rank_view(input.program));
  const fb::ProgramT& program = *view ? (*view)->program : input.program;
  std::vector<uint32_t> models;
  if (!options.model.empty()) {
    NRT_TRY(name, pick_entry_graph(program, options.model));
  }
  for (const uint32_t e : program.entry_points) {
    if (e >= program.graphs.size()) return make_error(ErrorCode::GraphIndexOutOfRange, "entry point " + std::to_string(e));
    const std::string& name = program.graphs[e]->name;
    if (!options.model.empty() && name != options.model) continue;
    if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..") {
      return make_error(ErrorCode::InvalidArgument, "entry graph name '" + name + "' cannot name a models/<name>.json entry");
    }
    models.push_back(e);
  }
  if (models.empty()) return make_error(ErrorCode::NoEntryPoint, "the program has no entry graph to export");
  if (input.storages.size() != program.storages.size()) {
    return make_error(ErrorCode::InvalidArgument, "the program has " + std::to_string(program.storages.size()) +
                                                      " storages but " + std::to_string(input.storages.size()) +
                                                      " byte buffers");
  }

  // Text and bytes the entries point into; node-based containers keep addresses stable.
  std::map<std::string, std::string> texts;
  std::vector<Pt2Entry> entries;
  auto add_text = [&](const std::string& name, std::string text) {
    auto& stored = texts[name] = std::move(text);
    entries.push_back({name, {reinterpret_cast<const uint8_t*>(stored.data()), stored.size()}});
  };

  std::map<std::pair<Payload, uint32_t>, std::string> records;  // (dir, storage) -> record name
  std::map<std::string, std::vector<uint8_t>> blobs;             // pickled records, by name
  uint32_t next_weight = 0, next_tensor = 0;
  std::vector<bool> claimed(program.weights.size(), false);
  for (size_t m = 0; m < models.size(); ++m) {
    const fb::GraphT& graph = *program.graphs[models[m]];
    NRT_TRY(extras, find_extras(program, graph.name));
    const NoneStyle style = *extras ? (*extras)->style : NoneStyle{};
    const auto kinds = payload_kinds(graph);
    std::vector<PayloadEntry> configs[2];
    for (size_t w = 0; w < program.weights.size(); ++w) {
      const fb::WeightTensorT& weight = *program.weights[w];
      auto kind = kinds.find(weight.fqn);
      // Weights no signature names: the first model keeps them, in its weights config.
      if (kind == kinds.end() && (m != 0 || claimed[w])) continue;
      claimed[w] = true;
      const Payload payload = kind == kinds.end() ? Payload::kWeights : kind->second;
      if (weight.storage >= program.storages.size() || !weight.meta) {
        return make_error(ErrorCode::StorageIndexOutOfRange, "weight '" + weight.fqn + "' has no storage or metadata");
      }
      if (!weight.shard_coordinate.empty()) {
        // One rank's shard of a DTensor parameter: a torch.save record of the DTensor, as torch writes it.
        auto spec = (*view)->dtensors.find(weight.fqn);
        if (spec == (*view)->dtensors.end()) {
          return make_error(ErrorCode::InvalidArgument, "weight '" + weight.fqn + "' holds a shard but no DTensor input reads it");
        }
        SavedTensor saved;
        saved.meta = *weight.meta;
        saved.storage = input.storages[weight.storage];
        saved.dtensor = spec->second;
        NRT_TRY(record_bytes, write_saved_dtensor(saved));
        const std::string name = (payload == Payload::kWeights ? "weight_" + std::to_string(next_weight++)
                                                               : "tensor_" + std::to_string(next_tensor++));
        auto& stored = blobs[name] = std::move(*record_bytes);
        entries.push_back({std::string(payload == Payload::kWeights ? "data/weights/" : "data/constants/") + name,
                           {stored.data(), stored.size()}});
        PayloadEntry entry;
        entry.fqn = weight.fqn;
        entry.path_name = name;
        entry.is_param = weight.is_parameter;
        entry.use_pickle = true;
        entry.tensor_meta = copy_meta(*weight.meta);
        entry.tensor_meta->sizes.clear();
        entry.tensor_meta->strides.clear();
        auto literal = [](int64_t v) {
          auto dim = std::make_unique<fb::SymDimT>();
          dim->literal = v;
          return dim;
        };
        for (int64_t d : spec->second.global_sizes) entry.tensor_meta->sizes.push_back(literal(d));
        for (int64_t d : spec->second.global_strides) entry.tensor_meta->strides.push_back(literal(d));
        entry.tensor_meta->storage_offset.reset();
        configs[payload == Payload::kWeights ? 0 : 1].push_back(std::move(entry));
        continue;
      }
      auto [record, added] = records.emplace(std::make_pair(payload, weight.storage), std::string());
      if (added) {
        record->second = payload == Payload::kWeights ? "weight_" + std::to_string(next_weight++)
                                                      : "tensor_" + std::to_string(next_tensor++);
        const auto& bytes = input.storages[weight.storage];
        entries.push_back({std::string(payload == Payload::kWeights ? "data/weights/" : "data/constants/") +
                               record->second,
                           {bytes.data(), bytes.size()}});
      }
      PayloadEntry entry;
      entry.fqn = weight.fqn;
      entry.path_name = record->second;
      entry.is_param = weight.is_parameter;
      entry.tensor_meta = copy_meta(*weight.meta);
      configs[payload == Payload::kWeights ? 0 : 1].push_back(std::move(entry));
    }
    for (const Payload payload : {Payload::kWeights, Payload::kConstants}) {
      NRT_TRY(text, write_payload_config(configs[payload == Payload::kWeights ? 0 : 1], style));
      add_text(payload == Payload::kWeights ? "data/weights/" + graph.name + "_weights_config.json"
                                            : "data/constants/" + graph.name + "_constants_config.json",
               std::move(*text));
    }
    NRT_TRY(json, export_torch_json(program, graph.name));
    add_text("models/" + graph.name + ".json", std::move(*json));
    add_text("data/sample_inputs/" + graph.name + ".pt", "");
  }
  add_text("archive_format", "pt2");
  add_text("archive_version", "0");
  add_text(".data/version", "6\n");  // PyTorch's zip container version for archives it writes
  add_text("byteorder", "little");
  add_text(".data/serialization_id", serialization_id(entries));
  return write_pt2_archive(options.root, entries);
}

}  // namespace nrt::torch_export
