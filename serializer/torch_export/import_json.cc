#include "serializer/torch_export/import_json.h"

#include "serializer/argument_values.h"
#include "serializer/torch_export/import_graph.h"
#include "serializer/torch_export/json_fields.h"
#include "serializer/torch_export/operator_target.h"
#include "serializer/torch_export/process_groups.h"
#include "serializer/torch_export/signature_specs.h"
#include "serializer/torch_export/torch_error_codes.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {
namespace {

// Reads the `{name}` of a TensorArgument / TokenArgument / CustomObjArgument.
Result<std::string_view> spec_arg_name(JsonElement json, const JsonPlace& place, std::string_view structure,
                                       ImportWarnings* warnings, std::string_view* class_fqn = nullptr) {
  NRT_TRY(object, as_object(json, place));
  std::optional<std::string_view> name;
  for (auto field : *object) {
    if (field.key == "name") {
      NRT_TRY(s, as_string(field.value, place.member("name")));
      name = *s;
    } else if (field.key == "class_fqn" && class_fqn != nullptr) {
      NRT_TRY(s, as_string(field.value, place.member("class_fqn")));
      *class_fqn = *s;
    } else {
      warnings->unknown_field(structure, field.key, place);
    }
  }
  if (!name) return missing_field(place, structure, "name");
  return *name;
}

// ConstantValue{as_none|as_int|as_float|as_string|as_bool} as an nrt argument.
Result<fb::ArgumentUnion> constant_value(JsonElement json, const JsonPlace& place) {
  NRT_TRY(member, as_union(json, place, "ConstantValue"));
  const JsonPlace at = place.member(member->key);
  fb::ArgumentUnion u;
  if (member->key == "as_none") {
    u.Set(fb::NoneArgT{});
  } else if (member->key == "as_int") {
    NRT_TRY(v, as_int64(member->value, at));
    fb::IntArgT arg;
    arg.value = *v;
    u.Set(std::move(arg));
  } else if (member->key == "as_float") {
    NRT_TRY(v, as_float(member->value, at));
    fb::FloatArgT arg;
    arg.value = *v;
    u.Set(std::move(arg));
  } else if (member->key == "as_string") {
    NRT_TRY(v, as_string(member->value, at));
    fb::StringArgT arg;
    arg.value = std::string(*v);
    u.Set(std::move(arg));
  } else if (member->key == "as_bool") {
    NRT_TRY(v, as_bool(member->value, at));
    fb::BoolArgT arg;
    arg.value = *v;
    u.Set(std::move(arg));
  } else {
    return make_error(codes::kUnknownUnionMember,
                      place.str() + ": unknown ConstantValue member '" + std::string(member->key) + "'");
  }
  return u;
}

// Fields common to both spec kinds: the arg (by its shape) and the target name.
struct SpecFields {
  int32_t value = -1;
  std::string target;
  std::optional<bool> persistent;
  std::unique_ptr<fb::ArgumentHolderT> constant;
};

Result<SpecFields> read_spec(JsonElement json, const JsonPlace& place, std::string_view structure, SpecArg shape,
                             std::string_view target_field, GraphImporter& graph, ImportWarnings* warnings) {
  NRT_TRY(object, as_object(json, place));
  SpecFields spec;
  bool has_arg = shape == SpecArg::kConstant, has_target = target_field.empty(), has_value = false;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "arg" && shape != SpecArg::kConstant) {
      has_arg = true;
      if (shape == SpecArg::kArgument) {
        NRT_TRY(arg, graph.argument(field.value, at));
        spec.value = static_cast<int32_t>(single_value_of(*arg));
        continue;
      }
      std::string_view class_fqn;
      const char* arg_structure = shape == SpecArg::kToken       ? "TokenArgument"
                                  : shape == SpecArg::kCustomObj ? "CustomObjArgument"
                                                                 : "TensorArgument";
      auto name = spec_arg_name(field.value, at, arg_structure, warnings,
                                shape == SpecArg::kCustomObj ? &class_fqn : nullptr);
      if (!name) return name.error();
      auto index = graph.value_index(*name);
      if (!index) {
        return make_error(codes::kUnknownValueName, at.str() + ": names value '" + std::string(*name) +
                                                        "', which the graph does not declare");
      }
      spec.value = static_cast<int32_t>(*index);
    } else if (k == target_field) {
      NRT_TRY(s, as_string(field.value, at));
      spec.target = std::string(*s);
      has_target = true;
    } else if (k == "persistent" && structure == "InputToBufferSpec") {
      NRT_TRY(b, as_bool(field.value, at));
      spec.persistent = *b;
    } else if (k == "value" && shape == SpecArg::kConstant) {
      NRT_TRY(value, constant_value(field.value, at));
      spec.constant = std::make_unique<fb::ArgumentHolderT>();
      spec.constant->arg = std::move(*value);
      has_value = true;
    } else {
      warnings->unknown_field(structure, k, place);
    }
  }
  if (!has_arg) return missing_field(place, structure, "arg");
  if (!has_target) return missing_field(place, structure, target_field);
  if (shape == SpecArg::kConstant && !has_value) return missing_field(place, structure, "value");
  if (structure == "InputToBufferSpec" && !spec.persistent) return missing_field(place, structure, "persistent");
  return spec;
}

Status read_signature(JsonElement json, const JsonPlace& place, GraphImporter& graph, ImportWarnings* warnings) {
  NRT_TRY(object, as_object(json, place));
  auto signature = std::make_unique<fb::SignatureT>();
  bool has_inputs = false, has_outputs = false;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    const bool inputs = k == "input_specs";
    if (!inputs && k != "output_specs") {
      warnings->unknown_field("GraphSignature", k, place);
      continue;
    }
    (inputs ? has_inputs : has_outputs) = true;
    NRT_TRY(array, as_array(field.value, at));
    size_t i = 0;
    for (JsonElement item : *array) {
      const JsonPlace p = at.item(i++);
      NRT_TRY(member, as_union(item, p, inputs ? "InputSpec" : "OutputSpec"));
      const JsonPlace q = p.member(member->key);
      if (inputs) {
        const InputSpecShape* shape = input_spec_shape(member->key);
        if (shape == nullptr) {
          return make_error(codes::kUnknownUnionMember,
                            p.str() + ": unknown InputSpec member '" + std::string(member->key) + "'");
        }
        const std::string structure = shape->kind == fb::InputKind::BUFFER ? "InputToBufferSpec"
                                                                           : "InputSpec." + std::string(shape->member);
        NRT_TRY(fields, read_spec(member->value, q, structure, shape->arg, shape->target_field, graph, warnings));
        auto spec = std::make_unique<fb::InputSpecT>();
        spec->kind = shape->kind;
        spec->value = fields->value;
        spec->target = std::move(fields->target);
        spec->persistent = fields->persistent.value_or(true);
        spec->constant = std::move(fields->constant);
        signature->inputs.push_back(std::move(spec));
      } else {
        const OutputSpecShape* shape = output_spec_shape(member->key);
        if (shape == nullptr) {
          return make_error(codes::kUnknownUnionMember,
                            p.str() + ": unknown OutputSpec member '" + std::string(member->key) + "'");
        }
        auto fields = read_spec(member->value, q, "OutputSpec." + std::string(shape->member), shape->arg,
                                shape->target_field, graph, warnings);
        if (!fields) return fields.error();
        auto spec = std::make_unique<fb::OutputSpecT>();
        spec->kind = shape->kind;
        spec->value = fields->value;
        spec->target = std::move(fields->target);
        signature->outputs.push_back(std::move(spec));
      }
    }
  }
  if (!has_inputs) return missing_field(place, "GraphSignature", "input_specs");
  if (!has_outputs) return missing_field(place, "GraphSignature", "output_specs");
  graph.graph().signature = std::move(signature);
  return {};
}

Result<std::optional<int64_t>> range_bound(JsonElement json, const JsonPlace& place) {
  if (is_null(json)) return std::optional<int64_t>();
  NRT_TRY(v, as_int64(json, place));
  return std::optional<int64_t>(*v);
}

Status read_range_constraints(JsonElement json, const JsonPlace& place, ProgramBuild& build, TorchExtras* extras) {
  NRT_TRY(object, as_object(json, place));
  auto& ranges = build.program->range_constraints;
  for (auto field : *object) {
    const JsonPlace at = place.member(field.key);
    NRT_TRY(bounds, as_object(field.value, at));
    auto range = std::make_unique<fb::RangeConstraintT>();
    range->symbol = std::string(field.key);
    int seen = 0;
    for (auto bound : *bounds) {
      if (bound.key != "min_val" && bound.key != "max_val") {
        build.read.warnings->unknown_field("RangeConstraint", bound.key, at);
        continue;
      }
      NRT_TRY(v, range_bound(bound.value, at.member(bound.key)));
      if (*v) (bound.key == "min_val" ? range->min : range->max) = **v;
      ++seen;
      if (!*v) build.read.style->observe(OptionalField::kRangeBound, false, build.read.warnings);
    }
    if (seen < 2) build.read.style->observe(OptionalField::kRangeBound, true, build.read.warnings);
    for (const auto& existing : ranges) {
      if (existing->symbol != range->symbol) continue;
      if (existing->min != range->min || existing->max != range->max) {
        return make_error(codes::kDuplicateName, at.str() + ": symbol '" + range->symbol +
                                                     "' has other bounds in a model imported before; import one "
                                                     "model at a time");
      }
      range.reset();
      break;
    }
    extras->range_constraints.emplace_back(field.key);
    if (range) ranges.push_back(std::move(range));
  }
  return {};
}

// Schema version first: nothing else is read from a document of another major version.
Status check_schema_version(JsonObject root, ImportWarnings* warnings, TorchExtras* extras) {
  const JsonPlace place{nullptr, "schema_version", -1};
  JsonElement json;
  if (root.at_key("schema_version").get(json) != simdjson::SUCCESS) {
    return missing_field(JsonPlace{}, "ExportedProgram", "schema_version");
  }
  if (json.type() != simdjson::dom::element_type::OBJECT) {
    return make_error(codes::kSchemaVersion,
                      "schema_version is " + simdjson::to_string(json) +
                          ", the legacy form of early torch.export releases (before schema 8.x); nrt reads "
                          "schema 8.x: re-export the program with a current torch");
  }
  NRT_TRY(object, as_object(json, place));
  int64_t major = -1, minor = -1;
  for (auto field : *object) {
    if (field.key == "major" || field.key == "minor") {
      NRT_TRY(v, as_int64(field.value, place.member(field.key)));
      (field.key == "major" ? major : minor) = *v;
    } else {
      warnings->unknown_field("SchemaVersion", field.key, place);
    }
  }
  if (major < 0) return missing_field(place, "SchemaVersion", "major");
  if (minor < 0) return missing_field(place, "SchemaVersion", "minor");
  if (major != kTorchSchemaMajor) {
    return make_error(codes::kSchemaVersion, "torch.export schema version " + std::to_string(major) + "." +
                                                 std::to_string(minor) + " is not supported; nrt reads major version " +
                                                 std::to_string(kTorchSchemaMajor));
  }
  if (minor > kTorchSchemaMinor) {
    warnings->once("newer-minor", "torch.export schema " + std::to_string(major) + "." + std::to_string(minor) +
                                      " is newer than 8." + std::to_string(kTorchSchemaMinor) +
                                      ", the newest this nrt knows; fields it does not know are ignored");
  }
  extras->schema_version = simdjson::to_string(json);
  return {};
}

}  // namespace

Status add_exported_program(JsonText text, const std::string& model, fb::ProgramT* program,
                            std::vector<std::string>* warnings_out) {
  // One parser per thread, reused as simdjson recommends: allocating and first touching its
  // buffers is a large part of an import. After a document beyond kKeptParserCapacity the parser
  // is dropped rather than kept for the life of the thread.
  constexpr size_t kKeptParserCapacity = size_t{128} << 20;
  thread_local simdjson::dom::parser parser;
  struct ShrinkAfterUse {
    ~ShrinkAfterUse() {
      if (parser.capacity() > kKeptParserCapacity) parser = simdjson::dom::parser{};
    }
  } shrink;
  NRT_TRY(root, parse_json(parser, text, "the ExportedProgram of '" + model + "'"));
  const JsonPlace place{};
  NRT_TRY(object, as_object(*root, place));

  ImportWarnings warnings;
  TorchExtras extras;
  NRT_RETURN_IF_ERROR(check_schema_version(*object, &warnings, &extras));

  ProgramBuild build;
  build.program = program;
  build.read = ReadContext{&warnings, &extras.style};
  for (uint32_t g = 0; g < program->graphs.size(); ++g) build.graphs.emplace(program->graphs[g]->name, g);

  std::optional<JsonElement> graph_module;
  bool has_opset = false, has_ranges = false;
  std::optional<JsonElement> range_constraints;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "graph_module") {
      graph_module = field.value;
    } else if (k == "opset_version") {
      NRT_RETURN_IF_ERROR(as_object(field.value, at));
      extras.opset_version = simdjson::to_string(field.value);
      has_opset = true;
    } else if (k == "range_constraints") {
      range_constraints = field.value;
      has_ranges = true;
    } else if (k == "verifiers" || k == "guards_code") {
      NRT_RETURN_IF_ERROR(as_array(field.value, at));
      (k == "verifiers" ? extras.verifiers : extras.guards_code) = simdjson::to_string(field.value);
    } else if (k == "torch_version") {
      NRT_TRY(s, as_string(field.value, at));
      extras.torch_version = simdjson::to_string(field.value);
      if (program->producer.empty()) program->producer = "torch " + std::string(*s) + " (torch.export)";
    } else if (k != "schema_version") {
      warnings.unknown_field("ExportedProgram", k, place);
    }
  }
  if (!graph_module) return missing_field(place, "ExportedProgram", "graph_module");
  if (!has_opset) return missing_field(place, "ExportedProgram", "opset_version");
  if (!has_ranges) return missing_field(place, "ExportedProgram", "range_constraints");

  const JsonPlace gm_place = place.member("graph_module");
  NRT_TRY(gm, as_object(*graph_module, gm_place));
  std::optional<JsonElement> graph_json, signature_json;
  bool has_call_graph = false;
  for (auto field : *gm) {
    const std::string_view k = field.key;
    const JsonPlace at = gm_place.member(k);
    if (k == "graph") {
      graph_json = field.value;
    } else if (k == "signature") {
      signature_json = field.value;
    } else if (k == "module_call_graph") {
      NRT_RETURN_IF_ERROR(as_array(field.value, at));
      extras.module_call_graph = simdjson::to_string(field.value);
      has_call_graph = true;
    } else if (k == "metadata" || k == "treespec_namedtuple_fields") {
      NRT_RETURN_IF_ERROR(as_object(field.value, at));
      (k == "metadata" ? extras.graph_module_metadata : extras.treespec_namedtuple_fields) =
          simdjson::to_string(field.value);
    } else {
      warnings.unknown_field("GraphModule", k, gm_place);
    }
  }
  if (!graph_json) return missing_field(gm_place, "GraphModule", "graph");
  if (!signature_json) return missing_field(gm_place, "GraphModule", "signature");
  if (!has_call_graph) return missing_field(gm_place, "GraphModule", "module_call_graph");

  // Operators already in the program (an earlier model of the same .pt2) are shared.
  for (uint32_t i = 0; i < program->operators.size(); ++i) {
    auto target = target_from_operator(*program->operators[i]);
    if (target) build.operators.emplace(std::move(*target), i);
  }

  GraphImporter graph(build, 0);
  NRT_TRY(index, graph.run(*graph_json, model, gm_place.member("graph")));
  NRT_RETURN_IF_ERROR(read_signature(*signature_json, gm_place.member("signature"), graph, &warnings));
  if (Status s = read_range_constraints(*range_constraints, place.member("range_constraints"), build, &extras); !s) {
    return s;
  }
  program->entry_points.push_back(*index);
  NRT_RETURN_IF_ERROR(collect_process_groups(program));

  extras.single_tensor_return_graphs = std::move(build.single_tensor_return_graphs);
  auto entry = std::make_unique<fb::KeyValueT>();
  entry->key = extras_key(model);
  entry->value = extras_to_json(extras);
  program->metadata.push_back(std::move(entry));
  for (const auto& message : warnings.messages()) warnings_out->push_back(model + ": " + message);
  return {};
}

Result<TorchImport> import_torch_json(JsonText text, const std::string& model) {
  TorchImport result;
  NRT_RETURN_IF_ERROR(add_exported_program(text, model, &result.program.program, &result.warnings));
  result.warnings.push_back(model + ": no weights (a bare ExportedProgram JSON): parameters, buffers and constants "
                                    "are declared inputs without data");
  return result;
}

}  // namespace nrt::torch_export
