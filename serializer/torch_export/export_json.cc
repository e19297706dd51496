#include "serializer/torch_export/export_json.h"

#include <set>

#include <simdjson.h>

#include "serializer/torch_export/export_graph.h"
#include "serializer/torch_export/import_json.h"
#include "serializer/torch_export/json_writer.h"
#include "serializer/torch_export/signature_specs.h"
#include "serializer/torch_export/torch_error_codes.h"
#include "serializer/torch_export/torch_extras.h"

namespace nrt::torch_export {
namespace {

Error not_expressible(const std::string& where, const std::string& what) {
  return make_error(codes::kNotExpressible, where + ": " + what + " has no torch.export JSON form");
}

// ConstantValue of a constant input.
Status constant_value(JsonWriter& w, const fb::ArgumentHolderT* holder, const std::string& where) {
  if (holder == nullptr) return make_error(ErrorCode::MissingField, where + ": constant input has no value");
  const auto& arg = holder->arg;
  w.begin_object();
  switch (arg.type) {
    case fb::Argument::NoneArg:
      w.key("as_none");
      w.boolean(true);
      break;
    case fb::Argument::IntArg:
      w.key("as_int");
      w.int64(arg.AsIntArg()->value);
      break;
    case fb::Argument::FloatArg:
      w.key("as_float");
      w.float64(arg.AsFloatArg()->value.value_or(0.0));
      break;
    case fb::Argument::StringArg:
      w.key("as_string");
      w.string(arg.AsStringArg()->value);
      break;
    case fb::Argument::BoolArg:
      w.key("as_bool");
      w.boolean(arg.AsBoolArg()->value);
      break;
    default:
      return not_expressible(where, std::string("a constant input of kind ") + fb::EnumNameArgument(arg.type));
  }
  w.end_object();
  return {};
}

Status spec_arg(JsonWriter& w, const fb::ProgramT& program, const TorchGraphStyle& style, const fb::GraphT& g,
                SpecArg shape, int32_t value, const fb::ArgumentHolderT* slot, const std::string& where) {
  if (shape == SpecArg::kArgument) {
    if (slot == nullptr) return make_error(ErrorCode::SignatureInputMismatch, where + ": no matching graph slot");
    return write_torch_argument(w, program, g, slot->arg, style, where);
  }
  if (value < 0 || static_cast<size_t>(value) >= g.values.size()) {
    return make_error(ErrorCode::ValueIndexOutOfRange, where + ": spec names value " + std::to_string(value));
  }
  const fb::ValueT& v = *g.values[static_cast<size_t>(value)];
  w.begin_object();
  w.key("name");
  w.string(v.name);
  if (shape == SpecArg::kCustomObj) {
    w.key("class_fqn");
    w.string(v.class_fqn);
  }
  w.end_object();
  return {};
}

Status signature(JsonWriter& w, const fb::ProgramT& program, const TorchGraphStyle& style, const fb::GraphT& g) {
  if (!g.signature) return make_error(ErrorCode::SignatureMissing, "graph '" + g.name + "' has no signature");
  const fb::SignatureT& sig = *g.signature;
  w.begin_object();
  w.key("input_specs");
  w.begin_array();
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const fb::InputSpecT& spec = *sig.inputs[i];
    const std::string where = "graph '" + g.name + "' input spec " + std::to_string(i);
    const InputSpecShape* shape = input_spec_shape(spec.kind);
    if (shape == nullptr) return not_expressible(where, "input spec kind UNKNOWN");
    w.begin_object();
    w.key(shape->member);
    w.begin_object();
    if (shape->arg == SpecArg::kConstant) {
      w.key("name");
      w.string(spec.target);
      w.key("value");
      NRT_RETURN_IF_ERROR(constant_value(w, spec.constant.get(), where));
    } else {
      w.key("arg");
      const fb::ArgumentHolderT* slot = i < g.inputs.size() ? g.inputs[i].get() : nullptr;
      NRT_RETURN_IF_ERROR(spec_arg(w, program, style, g, shape->arg, spec.value, slot, where));
      if (!shape->target_field.empty()) {
        w.key(shape->target_field);
        w.string(spec.target);
      }
      if (spec.kind == fb::InputKind::BUFFER) {
        w.key("persistent");
        w.boolean(spec.persistent);
      }
    }
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.key("output_specs");
  w.begin_array();
  for (size_t i = 0; i < sig.outputs.size(); ++i) {
    const fb::OutputSpecT& spec = *sig.outputs[i];
    const std::string where = "graph '" + g.name + "' output spec " + std::to_string(i);
    const OutputSpecShape* shape = output_spec_shape(spec.kind);
    if (shape == nullptr) return not_expressible(where, "output spec kind UNKNOWN");
    w.begin_object();
    w.key(shape->member);
    w.begin_object();
    w.key("arg");
    const fb::ArgumentHolderT* slot = i < g.outputs.size() ? g.outputs[i].get() : nullptr;
    NRT_RETURN_IF_ERROR(spec_arg(w, program, style, g, shape->arg, spec.value, slot, where));
    if (!shape->target_field.empty()) {
      w.key(shape->target_field);
      w.string(spec.target);
    }
    w.end_object();
    w.end_object();
  }
  w.end_array();
  w.end_object();
  return {};
}

// The module call graph of a program that never came from torch: the root module only, called
// with the user inputs as positional arguments and returning the user outputs as a tuple (a
// pytree spec torch.export.load can unflatten).
void default_module_call_graph(JsonWriter& w, const fb::GraphT& g) {
  size_t num_inputs = 0, num_outputs = 0;
  std::vector<std::string> arg_names;
  if (g.signature) {
    for (size_t i = 0; i < g.signature->inputs.size(); ++i) {
      const auto& spec = *g.signature->inputs[i];
      if (spec.kind != fb::InputKind::USER_INPUT && spec.kind != fb::InputKind::CONSTANT_INPUT) continue;
      ++num_inputs;
      if (spec.kind == fb::InputKind::CONSTANT_INPUT) {
        arg_names.push_back(spec.target);
      } else if (spec.value >= 0 && static_cast<size_t>(spec.value) < g.values.size()) {
        arg_names.push_back(g.values[static_cast<size_t>(spec.value)]->name);
      } else {
        arg_names.push_back("arg" + std::to_string(i));
      }
    }
    for (const auto& spec : g.signature->outputs) {
      if (spec->kind == fb::OutputKind::USER_OUTPUT || spec->kind == fb::OutputKind::LOSS_OUTPUT) ++num_outputs;
    }
  }
  auto leaves = [](size_t n) {
    std::string s;
    for (size_t i = 0; i < n; ++i) {
      if (i) s += ", ";
      s += R"({"type": null, "context": null, "children_spec": []})";
    }
    return s;
  };
  const std::string in_spec = R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [)"
                              R"({"type": "builtins.tuple", "context": "null", "children_spec": [)" +
                              leaves(num_inputs) +
                              R"(]}, {"type": "builtins.dict", "context": "[]", "children_spec": []}]}])";
  const std::string out_spec =
      R"([1, {"type": "builtins.tuple", "context": "null", "children_spec": [)" + leaves(num_outputs) + "]}]";
  w.begin_array();
  w.begin_object();
  w.key("fqn");
  w.string("");
  w.key("signature");
  w.begin_object();
  w.key("inputs");
  w.begin_array();
  w.end_array();
  w.key("outputs");
  w.begin_array();
  w.end_array();
  w.key("in_spec");
  w.string(in_spec);
  w.key("out_spec");
  w.string(out_spec);
  w.key("forward_arg_names");
  w.begin_array();
  for (const auto& name : arg_names) w.string(name);
  w.end_array();
  w.end_object();
  w.end_object();
  w.end_array();
}

void range_constraints(JsonWriter& w, const fb::ProgramT& program, const std::optional<TorchExtras>& extras,
                       const NoneStyle& style) {
  auto bound = [&](std::string_view key, const flatbuffers::Optional<int64_t>& v) {
    if (v.has_value()) {
      w.key(key);
      w.int64(*v);
    } else if (!style.omitted(OptionalField::kRangeBound)) {
      w.key(key);
      w.null();
    }
  };
  auto write = [&](const fb::RangeConstraintT& range) {
    w.key(range.symbol);
    w.begin_object();
    bound("min_val", range.min);
    bound("max_val", range.max);
    w.end_object();
  };
  w.begin_object();
  if (extras) {
    for (const auto& symbol : extras->range_constraints) {
      for (const auto& range : program.range_constraints) {
        if (range->symbol == symbol) {
          write(*range);
          break;
        }
      }
    }
  } else {
    for (const auto& range : program.range_constraints) write(*range);
  }
  w.end_object();
}

}  // namespace

Result<std::string> pick_entry_graph(const fb::ProgramT& program, const std::string& requested) {
  std::string names;
  for (const uint32_t e : program.entry_points) {
    if (e >= program.graphs.size()) return make_error(ErrorCode::GraphIndexOutOfRange, "entry point names graph " + std::to_string(e));
    const std::string& name = program.graphs[e]->name;
    if (!requested.empty() && name == requested) return name;
    names += (names.empty() ? "'" : ", '") + name + "'";
  }
  if (!requested.empty()) {
    return make_error(ErrorCode::InvalidArgument, "the program has no entry graph '" + requested + "' (it has " +
                                                      (names.empty() ? std::string("none") : names) + ")");
  }
  if (program.entry_points.size() != 1) {
    return make_error(ErrorCode::InvalidArgument, "the program has " + std::to_string(program.entry_points.size()) +
                                                      " entry graphs (" + names + "); name the one to export");
  }
  return program.graphs[program.entry_points[0]]->name;
}

Result<std::string> export_torch_json(const fb::ProgramT& program, const std::string& graph_name) {
  uint32_t index = 0;
  bool found = false;
  for (const uint32_t e : program.entry_points) {
    if (e < program.graphs.size() && program.graphs[e]->name == graph_name) {
      index = e;
      found = true;
    }
  }
  if (!found) return make_error(ErrorCode::InvalidArgument, "'" + graph_name + "' is not an entry graph");
  NRT_TRY(extras, find_extras(program, graph_name));
  const NoneStyle style = *extras ? (*extras)->style : NoneStyle{};
  std::set<std::string> single_return;
  if (*extras) single_return.insert((*extras)->single_tensor_return_graphs.begin(), (*extras)->single_tensor_return_graphs.end());
  const fb::GraphT& g = *program.graphs[index];

  JsonWriter w;
  w.text().reserve(1 << 16);
  const TorchGraphStyle graph_style{style, single_return};
  auto raw_or = [&w](std::string_view key, const std::string& raw, std::string_view fallback) {
    w.key(key);
    w.raw(raw.empty() ? fallback : std::string_view(raw));
  };
  const TorchExtras* x = *extras ? &**extras : nullptr;

  w.begin_object();
  w.key("graph_module");
  w.begin_object();
  w.key("graph");
  NRT_RETURN_IF_ERROR(write_torch_graph(w, program, index, graph_style));
  w.key("signature");
  NRT_RETURN_IF_ERROR(signature(w, program, graph_style, g));
  if (x != nullptr && !x->module_call_graph.empty()) {
    raw_or("module_call_graph", x->module_call_graph, "[]");
  } else {
    w.key("module_call_graph");
    default_module_call_graph(w, g);
  }
  if (x == nullptr || !x->graph_module_metadata.empty()) raw_or("metadata", x ? x->graph_module_metadata : "", "{}");
  if (x == nullptr || !x->treespec_namedtuple_fields.empty()) {
    raw_or("treespec_namedtuple_fields", x ? x->treespec_namedtuple_fields : "", "{}");
  }
  w.end_object();
  raw_or("opset_version", x ? x->opset_version : "", "{}");
  w.key("range_constraints");
  range_constraints(w, program, *extras, style);
  raw_or("schema_version", x ? x->schema_version : "",
         R"({"major": )" + std::to_string(kTorchSchemaMajor) + R"(, "minor": )" + std::to_string(kTorchSchemaMinor) + "}");
  if (x == nullptr || !x->verifiers.empty()) raw_or("verifiers", x ? x->verifiers : "", R"(["ATEN"])");
  if (x != nullptr && !x->torch_version.empty()) raw_or("torch_version", x->torch_version, "");
  if (x == nullptr || !x->guards_code.empty()) raw_or("guards_code", x ? x->guards_code : "", "[]");
  w.end_object();
  if (!simdjson::validate_utf8(w.text().data(), w.text().size())) {
    return make_error(ErrorCode::InvalidArgument, "graph '" + graph_name + "' holds a string that is not valid UTF-8");
  }
  return std::move(w.text());
}

}  // namespace nrt::torch_export
