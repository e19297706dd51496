#include "serializer/torch_export/torch_extras.h"

#include "serializer/torch_export/json_writer.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

constexpr std::array<std::string_view, static_cast<size_t>(OptionalField::kCount)> kFieldNames = {
    "device.index",
    "node.is_hop_single_tensor_return",
    "node.name",
    "named_argument.kind",
    "sym_expr.hint",
    "range_constraint.bounds",
    "graph.sym_float_values",
    "graph.custom_obj_values",
    "graph.is_single_tensor_return",
};

void write_string_list(JsonWriter& w, const std::vector<std::string>& items) {
  w.begin_array();
  for (const auto& item : items) w.string(item);
  w.end_array();
}

Status read_string_list(JsonElement value, const JsonPlace& place, std::vector<std::string>* out) {
  NRT_TRY(array, as_array(value, place));
  size_t i = 0;
  for (JsonElement item : *array) {
    NRT_TRY(s, as_string(item, place.item(i++)));
    out->emplace_back(*s);
  }
  return {};
}

}  // namespace

std::string_view optional_field_name(OptionalField field) { return kFieldNames[static_cast<size_t>(field)]; }

void NoneStyle::observe(OptionalField field, bool omitted, ImportWarnings* warnings) {
  int8_t& state = state_[static_cast<size_t>(field)];
  const int8_t seen = omitted ? kOmitted : kNull;
  if (state == kUnseen) {
    state = seen;
  } else if (state != seen && warnings != nullptr) {
    warnings->once("mixed-none." + std::string(optional_field_name(field)),
                   "the source both omits and writes null for absent '" + std::string(optional_field_name(field)) +
                       "'; exporting writes it one way (" + (state == kOmitted ? "omitted" : "null") + ")");
  }
}

std::vector<std::string> NoneStyle::omitted_names() const {
  std::vector<std::string> names;
  for (size_t f = 0; f < state_.size(); ++f) {
    if (state_[f] == kOmitted) names.emplace_back(kFieldNames[f]);
  }
  return names;
}

void NoneStyle::set_omitted(std::string_view name) {
  for (size_t f = 0; f < kFieldNames.size(); ++f) {
    if (kFieldNames[f] == name) state_[f] = kOmitted;
  }
}

std::string extras_key(std::string_view model) { return "torch.export/" + std::string(model); }

std::string extras_to_json(const TorchExtras& extras) {
  JsonWriter w;
  w.begin_object();
  auto raw_member = [&w](std::string_view name, const std::string& json) {
    if (json.empty()) return;
    w.key(name);
    w.raw(json);
  };
  raw_member("schema_version", extras.schema_version);
  raw_member("opset_version", extras.opset_version);
  raw_member("verifiers", extras.verifiers);
  raw_member("torch_version", extras.torch_version);
  raw_member("guards_code", extras.guards_code);
  if (!extras.graph_module_metadata.empty() || !extras.module_call_graph.empty() ||
      !extras.treespec_namedtuple_fields.empty()) {
    w.key("graph_module");
    w.begin_object();
    raw_member("metadata", extras.graph_module_metadata);
    raw_member("module_call_graph", extras.module_call_graph);
    raw_member("treespec_namedtuple_fields", extras.treespec_namedtuple_fields);
    w.end_object();
  }
  w.key("range_constraints");
  write_string_list(w, extras.range_constraints);
  w.key("single_tensor_return_graphs");
  write_string_list(w, extras.single_tensor_return_graphs);
  w.key("omitted");
  write_string_list(w, extras.style.omitted_names());
  w.end_object();
  return std::move(w.text());
}

Result<TorchExtras> extras_from_json(std::string_view text) {
  simdjson::dom::parser parser;
  NRT_TRY(root, parse_json(parser, text, "torch.export extras metadata"));
  const JsonPlace place{nullptr, "torch.export extras", -1};
  NRT_TRY(object, as_object(*root, place));
  TorchExtras extras;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "schema_version") {
      extras.schema_version = simdjson::to_string(field.value);
    } else if (k == "opset_version") {
      extras.opset_version = simdjson::to_string(field.value);
    } else if (k == "verifiers") {
      extras.verifiers = simdjson::to_string(field.value);
    } else if (k == "torch_version") {
      extras.torch_version = simdjson::to_string(field.value);
    } else if (k == "guards_code") {
      extras.guards_code = simdjson::to_string(field.value);
    } else if (k == "graph_module") {
      NRT_TRY(gm, as_object(field.value, at));
      for (auto member : *gm) {
        const std::string_view m = member.key;
        if (m == "metadata") extras.graph_module_metadata = simdjson::to_string(member.value);
        if (m == "module_call_graph") extras.module_call_graph = simdjson::to_string(member.value);
        if (m == "treespec_namedtuple_fields") extras.treespec_namedtuple_fields = simdjson::to_string(member.value);
      }
    } else if (k == "range_constraints") {
      NRT_RETURN_IF_ERROR(read_string_list(field.value, at, &extras.range_constraints));
    } else if (k == "single_tensor_return_graphs") {
      NRT_RETURN_IF_ERROR(read_string_list(field.value, at, &extras.single_tensor_return_graphs));
    } else if (k == "omitted") {
      std::vector<std::string> names;
      NRT_RETURN_IF_ERROR(read_string_list(field.value, at, &names));
      for (const auto& name : names) extras.style.set_omitted(name);
    }
  }
  return extras;
}

Result<std::optional<TorchExtras>> find_extras(const fb::ProgramT& program, std::string_view model) {
  const std::string key = extras_key(model);
  for (const auto& entry : program.metadata) {
    if (entry->key != key) continue;
    auto extras = extras_from_json(entry->value);
    if (!extras) return make_error(extras.error().code, "metadata '" + key + "': " + extras.error().message);
    return std::optional<TorchExtras>(std::move(*extras));
  }
  return std::optional<TorchExtras>();
}

}  // namespace nrt::torch_export
