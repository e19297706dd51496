#include "executor/dtensor/shard_plan.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <numeric>

#include "executor/dtensor/schema_args.h"
#include "executor/dtensor/schema_placements.h"
#include "core/strict_json.h"
#include "executor/dtensor/shard_layout.h"
#include "serializer/input_limits.h"

namespace nrt::dist {
namespace {

Error bad(const std::string& what) { return make_error(ErrorCode::InvalidArgument, "shard plan: " + what); }

Result<Placements> parse_list(const nlohmann::json& j, const std::string& entry, size_t mesh_ndim) {
  if (!j.is_array()) return bad(entry + ": expected a list of placements, one per mesh dim");
  Placements out;
  for (const auto& item : j) {
    if (!item.is_string()) return bad(entry + ": placements are strings such as \"Shard(0)\"");
    auto p = parse_placement(item.get<std::string>());
    if (!p) return bad(entry + ": " + p.error().message);
    out.push_back(*p);
  }
  if (out.size() != mesh_ndim) {
    return bad(entry + ": " + std::to_string(out.size()) + " placements for a mesh of " + std::to_string(mesh_ndim) +
               " dims");
  }
  return out;
}

Result<std::map<std::string, Placements>> parse_map(const nlohmann::json& root, const char* key, size_t mesh_ndim) {
  std::map<std::string, Placements> out;
  if (!root.contains(key)) return out;
  if (!root[key].is_object()) return bad(std::string("\"") + key + "\" must be an object");
  for (const auto& [name, value] : root[key].items()) {
    NRT_TRY(p, parse_list(value, std::string(key) + " '" + name + "'", mesh_ndim));
    out[name] = *p;
  }
  return out;
}

}  // namespace

Result<ShardPlan> parse_shard_plan(const std::string& json_text) {
  auto parsed = parse_strict_json(json_text);
  if (!parsed) return bad(parsed.error().message);
  const nlohmann::json root = std::move(*parsed);
  if (!root.is_object()) return bad("expected an object");
  for (const auto& [key, value] : root.items()) {
    if (key != "mesh" && key != "modules" && key != "parameters" && key != "inputs" && key != "outputs") {
      return bad("unknown key \"" + key + "\" (mesh, modules, parameters, inputs, outputs)");
    }
  }
  ShardPlan plan;
  if (!root.contains("mesh") || !root["mesh"].is_object() || !root["mesh"].contains("shape") ||
      !root["mesh"]["shape"].is_array() || root["mesh"]["shape"].empty()) {
    return bad("\"mesh\" must be an object with a non-empty \"shape\" list");
  }
  if (root["mesh"]["shape"].size() > kMaxMeshDims) {
    return bad("the mesh has " + std::to_string(root["mesh"]["shape"].size()) + " dims; at most " +
               std::to_string(kMaxMeshDims) + " are supported");
  }
  int64_t size = 1;
  for (const auto& s : root["mesh"]["shape"]) {
    if (!s.is_number_integer() || s.get<int64_t>() < 1 || s.get<int64_t>() > (1 << 20)) {
      return bad("mesh shape entries must be integers in [1, 2^20]");
    }
    plan.mesh_shape.push_back(s.get<int64_t>());
    size *= plan.mesh_shape.back();
    if (size > (1 << 20)) return bad("the mesh holds more than 2^20 ranks");
  }
  if (root["mesh"].contains("dim_names")) {
    const auto& names = root["mesh"]["dim_names"];
    if (!names.is_array() || names.size() != plan.mesh_shape.size()) return bad("mesh dim_names: one name per mesh dim");
    for (const auto& n : names) {
      if (!n.is_string()) return bad("mesh dim_names must be strings");
      // torch's DeviceMesh refuses repeated names too: a placement's dim would be ambiguous.
      if (std::find(plan.dim_names.begin(), plan.dim_names.end(), n.get<std::string>()) != plan.dim_names.end()) {
        return bad("mesh dim_names: \"" + n.get<std::string>() + "\" names two mesh dims");
      }
      plan.dim_names.push_back(n.get<std::string>());
    }
  }
  const size_t ndim = plan.mesh_shape.size();
  if (root.contains("modules")) {
    if (!root["modules"].is_object()) return bad("\"modules\" must be an object");
    for (const auto& [prefix, style] : root["modules"].items()) {
      if (!style.is_string() || (style != "colwise" && style != "rowwise")) {
        return bad("modules '" + prefix + "': the style is \"colwise\" or \"rowwise\"");
      }
      plan.modules[prefix] = style.get<std::string>();
    }
  }
  NRT_TRY(parameters, parse_map(root, "parameters", ndim));
  NRT_TRY(inputs, parse_map(root, "inputs", ndim));
  NRT_TRY(outputs, parse_map(root, "outputs", ndim));
  plan.parameters = std::move(*parameters);
  plan.inputs = std::move(*inputs);
  plan.outputs = std::move(*outputs);
  return plan;
}

Result<fb::ProgramT> apply_shard_plan(const fb::Program& source, const ShardPlan& plan) {
  fb::ProgramT program;
  source.UnPackTo(&program);
  if (program.entry_points.empty()) return make_error(ErrorCode::NoEntryPoint, "program lists no entry point");
  fb::GraphT& graph = *program.graphs[program.entry_points[0]];
  for (const auto& v : graph.values) {
    if (v->kind == fb::ValueKind::DTENSOR) {
      return bad("value '" + v->name + "' of graph '" + graph.name + "' is already a DTensor");
    }
  }
  const size_t ndim = plan.mesh_shape.size();
  Mesh mesh;
  mesh.shape = plan.mesh_shape;
  const int64_t world = std::accumulate(mesh.shape.begin(), mesh.shape.end(), int64_t{1}, std::multiplies<>());
  auto mesh_t = std::make_unique<fb::DeviceMeshT>();
  mesh_t->name = "mesh";
  mesh_t->shape = plan.mesh_shape;
  mesh_t->dim_names = plan.dim_names;
  for (int32_t r = 0; r < world; ++r) mesh_t->ranks.push_back(r);
  mesh.dim_names = plan.dim_names;
  const auto mesh_index = static_cast<uint32_t>(program.meshes.size());
  program.meshes.push_back(std::move(mesh_t));

  // Values by what the plan calls them.
  std::map<std::string, uint32_t> parameter_value, input_value, output_value;
  if (graph.signature) {
    for (const auto& spec : graph.signature->inputs) {
      if (spec->value < 0) continue;
      if (spec->kind == fb::InputKind::PARAMETER || spec->kind == fb::InputKind::BUFFER) {
        parameter_value[spec->target] = static_cast<uint32_t>(spec->value);
      } else if (spec->kind == fb::InputKind::USER_INPUT) {
        input_value[graph.values[static_cast<size_t>(spec->value)]->name] = static_cast<uint32_t>(spec->value);
      }
    }
    for (const auto& spec : graph.signature->outputs) {
      if (spec->value >= 0 && spec->kind == fb::OutputKind::USER_OUTPUT) {
        output_value[graph.values[static_cast<size_t>(spec->value)]->name] = static_cast<uint32_t>(spec->value);
      }
    }
  } else {
    for (const auto& h : graph.inputs) {
      if (const auto* t = h->arg.AsTensorArg()) input_value[graph.values[t->value]->name] = t->value;
    }
    for (const auto& h : graph.outputs) {
      if (const auto* t = h->arg.AsTensorArg()) output_value[graph.values[t->value]->name] = t->value;
    }
  }

  std::map<uint32_t, std::pair<Placements, std::string>> chosen;  // value -> placements, plan entry
  for (const auto& [prefix, style] : plan.modules) {
    std::optional<int64_t> tp = ndim == 1 ? std::optional<int64_t>(0) : mesh.dim_named("tp");
    if (!tp) return bad("modules '" + prefix + "': a mesh of " + std::to_string(ndim) + " dims needs a dim named \"tp\"");
    bool any = false;
    for (const auto& [fqn, v] : parameter_value) {
      if (!fqn.starts_with(prefix + ".")) continue;
      const std::string leaf = fqn.substr(prefix.size() + 1);
      if (leaf.find('.') != std::string::npos) continue;
      Placements p(ndim, Placement::replicate());
      if (leaf == "weight") {
        p[static_cast<size_t>(*tp)] = Placement::shard(style == "colwise" ? 0 : 1);
      } else if (leaf == "bias") {
        if (style == "colwise") p[static_cast<size_t>(*tp)] = Placement::shard(0);
      } else {
        continue;
      }
      chosen[v] = {p, "modules '" + prefix + "' (" + fqn + ")"};
      any = true;
    }
    if (!any) return bad("modules '" + prefix + "': no parameter " + prefix + ".weight or " + prefix + ".bias");
  }
  auto pick = [&](const std::map<std::string, Placements>& entries, const std::map<std::string, uint32_t>& values,
                  const std::string& kind) -> Status {
    for (const auto& [name, p] : entries) {
      if (name == "*" && kind == "outputs") continue;
      auto it = values.find(name);
      if (it == values.end()) {
        std::string known;
        for (const auto& [n, v] : values) known += (known.empty() ? "" : ", ") + n;
        return bad(kind + " '" + name + "': the program has none of that name (" + (known.empty() ? "none" : known) + ")");
      }
      chosen[it->second] = {p, kind + " '" + name + "'"};
    }
    return {};
  };
  NRT_RETURN_IF_ERROR(pick(plan.parameters, parameter_value, "parameters"));
  NRT_RETURN_IF_ERROR(pick(plan.inputs, input_value, "inputs"));
  NRT_RETURN_IF_ERROR(pick(plan.outputs, output_value, "outputs"));
  const Placements every_output = plan.outputs.contains("*") ? plan.outputs.at("*") : Placements(ndim, Placement::replicate());
  for (const auto& [name, v] : output_value) {
    if (!chosen.contains(v)) chosen[v] = {every_output, "outputs '*'"};
  }

  const std::vector<int64_t> origin(ndim, 0);
  for (const auto& [v, choice] : chosen) {
    fb::ValueT& value = *graph.values[v];
    const auto& [placements, entry] = choice;
    if (value.kind != fb::ValueKind::TENSOR || !value.tensor) return bad(entry + ": value '" + value.name + "' is not a tensor");
    std::vector<int64_t> sizes;
    for (const auto& d : value.tensor->sizes) {
      if (!d->expr.empty()) return bad(entry + ": value '" + value.name + "' has symbolic sizes");
      sizes.push_back(d->literal);
    }
    if (Status s = check_placements(placements, static_cast<int64_t>(sizes.size()), static_cast<int64_t>(ndim), entry); !s) {
      return bad(s.error().message + " (value '" + value.name + "' is " + std::to_string(sizes.size()) + "-D)");
    }
    NRT_TRY(region, shard_region(sizes, placements, mesh.shape, origin));
    auto spec = std::make_unique<fb::DTensorSpecT>();
    spec->mesh = mesh_index;
    for (const auto& p : placements) spec->placements.push_back(to_schema(p));
    spec->global_sizes = literal_dims(sizes);
    for (const auto& s : value.tensor->strides) spec->global_strides.push_back(std::make_unique<fb::SymDimT>(*s));
    value.kind = fb::ValueKind::DTENSOR;
    value.dtensor = std::move(spec);
    value.tensor->sizes = literal_dims(region->sizes);
    value.tensor->strides = literal_dims(dense_strides(region->sizes));
  }
  return program;
}

Result<ProgramFile> shard_with_plan(const ProgramFile& file, const ShardPlan& plan) {
  NRT_TRY(program, apply_shard_plan(file.program(), plan));
  return ProgramFile::with_program(file, *program);
}

}  // namespace nrt::dist
