#include "serializer/program_summary_json.h"

#include <string_view>
#include <unordered_map>

namespace nrt {
namespace {

using json = nlohmann::ordered_json;

json dims_json(const std::vector<DimSummary>& dims) {
  json out = json::array();
  for (const auto& dim : dims) {
    if (dim.expr) {
      out.push_back(*dim.expr);
    } else {
      out.push_back(dim.literal);
    }
  }
  return out;
}

template <typename T>
json optional_json(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

json slot_json(const SlotSummary& slot) {
  json out = {
      {"name", slot.name},
      {"kind", slot.kind},
      {"type", slot.type},
      {"dtype", optional_json(slot.dtype)},
      {"shape", slot.dtype ? dims_json(slot.shape) : json(nullptr)},
      {"device", optional_json(slot.device)},
      {"signature_kind", optional_json(slot.signature_kind)},
      {"target", optional_json(slot.target)},
  };
  if (slot.dtensor) {
    out["dtensor"] = {
        {"mesh", slot.dtensor->mesh},
        {"placements", slot.dtensor->placements},
        {"global_shape", dims_json(slot.dtensor->global_shape)},
    };
  } else {
    out["dtensor"] = nullptr;
  }
  return out;
}

// A JSON object of (key, value) pairs in their order, built in linear time: ordered_json's own
// insertion searches the keys so far. A repeated key keeps its first place and last value.
template <typename Pairs>
json object_of_pairs(const Pairs& pairs) {
  json out = json::object();
  auto& entries = static_cast<json::object_t::Container&>(out.get_ref<json::object_t&>());
  std::unordered_map<std::string_view, size_t> seen;
  for (const auto& [key, value] : pairs) {
    auto [at, fresh] = seen.emplace(key, entries.size());
    if (fresh) {
      entries.emplace_back(key, value);
    } else {
      entries[at->second].second = value;
    }
  }
  return out;
}

}  // namespace

nlohmann::ordered_json program_summary_json(const ProgramSummary& summary) {
  json graphs = json::array();
  for (const auto& graph : summary.graphs) {
    json inputs = json::array();
    json outputs = json::array();
    for (const auto& slot : graph.inputs) inputs.push_back(slot_json(slot));
    for (const auto& slot : graph.outputs) outputs.push_back(slot_json(slot));
    json ops = object_of_pairs(graph.ops);
    graphs.push_back({
        {"name", graph.name},
        {"entry_point", graph.entry_point},
        {"num_nodes", graph.num_nodes},
        {"num_values", graph.num_values},
        {"inputs", std::move(inputs)},
        {"outputs", std::move(outputs)},
        {"ops", std::move(ops)},
    });
  }
  json meshes = json::array();
  for (const auto& mesh : summary.meshes) {
    meshes.push_back({
        {"name", mesh.name},
        {"device_type", mesh.device_type},
        {"shape", mesh.shape},
        {"dim_names", mesh.dim_names},
        {"ranks", mesh.ranks},
    });
  }
  json groups = json::array();
  for (const auto& group : summary.process_groups) {
    groups.push_back({
        {"name", group.name},
        {"ranks", group.ranks},
        {"backend", group.backend},
        {"mesh", group.mesh >= 0 ? json(group.mesh) : json(nullptr)},
        {"mesh_dim", group.mesh_dim >= 0 ? json(group.mesh_dim) : json(nullptr)},
    });
  }
  json metadata = object_of_pairs(summary.metadata);
  return {
      {"schema_version", summary.schema_version},
      {"producer", summary.producer},
      {"graphs", std::move(graphs)},
      {"meshes", std::move(meshes)},
      {"process_groups", std::move(groups)},
      {"num_weights", summary.num_weights},
      {"num_storages", summary.num_storages},
      {"weight_bytes", summary.weight_bytes},
      {"num_parameters", summary.num_parameters},
      {"metadata", std::move(metadata)},
  };
}

}  // namespace nrt
