#include "serializer/torch_export/import_graph.h"

#include <algorithm>

#include "serializer/torch_export/enum_tables.h"
#include "serializer/torch_export/operator_target.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

constexpr int kMaxGraphDepth = 32;  // nested subgraphs (cond inside cond inside ...)

}  // namespace

std::optional<uint32_t> GraphImporter::value_index(std::string_view name) const { return names_.find(name); }

Result<uint32_t> GraphImporter::reference(std::string_view name, const JsonPlace& place) const {
  auto index = names_.find(name);
  if (!index) {
    return make_error(codes::kUnknownValueName, place.str() + ": names value '" + std::string(name) + "', which graph '" +
                                                    graph_->name + "' does not declare");
  }
  return *index;
}

// TensorArgument{name}.
Result<uint32_t> GraphImporter::tensor_reference(JsonElement json, const JsonPlace& place) const {
  NRT_TRY(object, as_object(json, place));
  std::optional<std::string_view> name;
  for (auto field : *object) {
    if (field.key == "name") {
      NRT_TRY(s, as_string(field.value, place.member("name")));
      name = *s;
    } else {
      build_.read.warnings->unknown_field("TensorArgument", field.key, place);
    }
  }
  if (!name) return missing_field(place, "TensorArgument", "name");
  return reference(*name, place);
}

Result<uint32_t> GraphImporter::operator_index(std::string_view target, const JsonPlace& place) {
  auto& operators = build_.operators;
  if (auto it = operators.find(target); it != operators.end()) return it->second;
  auto op = operator_from_target(target);
  if (!op) return prefixed(place, op.error());
  const auto index = static_cast<uint32_t>(build_.program->operators.size());
  build_.program->operators.push_back(std::make_unique<fb::OperatorT>(std::move(*op)));
  operators.emplace(std::string(target), index);
  return index;
}

// GraphArgument{name, graph}: the subgraph is imported once per (parent, name).
Result<uint32_t> GraphImporter::subgraph(JsonElement json, const JsonPlace& place) {
  NRT_TRY(object, as_object(json, place));
  std::optional<std::string_view> name;
  std::optional<JsonElement> graph_json;
  for (auto field : *object) {
    if (field.key == "name") {
      NRT_TRY(s, as_string(field.value, place.member("name")));
      name = *s;
    } else if (field.key == "graph") {
      graph_json = field.value;
    } else {
      build_.read.warnings->unknown_field("GraphArgument", field.key, place);
    }
  }
  if (!name) return missing_field(place, "GraphArgument", "name");
  if (!graph_json) return missing_field(place, "GraphArgument", "graph");
  if (name->empty() || name->find('/') != std::string_view::npos) {
    return json_error(place.member("name"), "subgraph name '" + std::string(*name) + "' is empty or contains '/'");
  }
  if (depth_ + 1 >= kMaxGraphDepth) {
    return make_error(ErrorCode::GraphRecursion,
                      place.str() + ": subgraphs nest deeper than " + std::to_string(kMaxGraphDepth));
  }
  std::string full_name = graph_->name + "/" + std::string(*name);
  if (auto it = build_.graphs.find(full_name); it != build_.graphs.end()) return it->second;
  GraphImporter nested(build_, depth_ + 1);
  return nested.run(*graph_json, std::move(full_name), place.member("graph"));
}

Status GraphImporter::declare(std::string_view name, std::unique_ptr<fb::ValueT> value, const JsonPlace& place) {
  const auto index = static_cast<uint32_t>(graph_->values.size());
  if (!names_.insert(name, index)) {
    return make_error(codes::kDuplicateName,
                      place.str() + ": value '" + std::string(name) + "' is declared more than once in graph '" +
                          graph_->name + "'");
  }
  value->name = std::string(name);
  graph_->values.push_back(std::move(value));
  return {};
}

// The value tables of a Graph, in a fixed order so the value indices are deterministic.
Status GraphImporter::read_values(JsonObject graph_json, const JsonPlace& place) {
  static constexpr std::string_view kTables[] = {"tensor_values", "sym_int_values", "sym_bool_values",
                                                 "sym_float_values", "custom_obj_values"};
  for (const std::string_view table : kTables) {
    JsonElement json;
    if (graph_json.at_key(table).get(json) != simdjson::SUCCESS) {
      if (table == "tensor_values" || table == "sym_int_values" || table == "sym_bool_values") {
        return missing_field(place, "Graph", table);
      }
      build_.read.style->observe(table == "sym_float_values" ? OptionalField::kGraphSymFloatValues
                                                             : OptionalField::kGraphCustomObjValues,
                                 true, build_.read.warnings);
      continue;
    }
    if (table == "sym_float_values" || table == "custom_obj_values") {
      build_.read.style->observe(table == "sym_float_values" ? OptionalField::kGraphSymFloatValues
                                                             : OptionalField::kGraphCustomObjValues,
                                 false, build_.read.warnings);
    }
    const JsonPlace at = place.member(table);
    NRT_TRY(object, as_object(json, at));
    graph_->values.reserve(graph_->values.size() + object->size());
    names_.reserve(graph_->values.size() + object->size());
    for (auto field : *object) {
      const JsonPlace p = at.member(field.key);
      auto value = std::make_unique<fb::ValueT>();
      if (table == "tensor_values") {
        NRT_TRY(meta, read_tensor_meta(field.value, p, build_.read));
        value->kind = fb::ValueKind::TENSOR;
        value->tensor = std::move(*meta);
      } else if (table == "custom_obj_values") {
        // CustomObjArgument{name, class_fqn}; the name repeats the key.
        NRT_TRY(object_json, as_object(field.value, p));
        JsonElement class_fqn;
        if (object_json->at_key("class_fqn").get(class_fqn) != simdjson::SUCCESS) {
          return missing_field(p, "CustomObjArgument", "class_fqn");
        }
        NRT_TRY(fqn, as_string(class_fqn, p.member("class_fqn")));
        value->kind = fb::ValueKind::CUSTOM_OBJ;
        value->class_fqn = std::string(*fqn);
      } else {
        // SymInt{as_expr|as_int}, SymBool{as_expr|as_bool}, SymFloat{as_expr|as_float}.
        const bool is_int = table == "sym_int_values", is_bool = table == "sym_bool_values";
        value->kind = is_int ? fb::ValueKind::SYM_INT : is_bool ? fb::ValueKind::SYM_BOOL : fb::ValueKind::SYM_FLOAT;
        value->sym = std::make_unique<fb::SymInfoT>();
        NRT_TRY(m, as_union(field.value, p, is_int ? "SymInt" : is_bool ? "SymBool" : "SymFloat"));
        const JsonPlace q = p.member(m->key);
        const std::string_view literal_member = is_int ? "as_int" : is_bool ? "as_bool" : "as_float";
        if (m->key == literal_member) {
          if (is_int) {
            NRT_TRY(v, as_int64(m->value, q));
            value->sym->int_hint = *v;
          } else if (is_bool) {
            NRT_TRY(v, as_bool(m->value, q));
            value->sym->bool_hint = *v;
          } else {
            NRT_TRY(v, as_float(m->value, q));
            value->sym->float_hint = *v;
          }
        } else if (m->key == "as_expr") {
          NRT_TRY(expr, as_object(m->value, q));
          bool has_expr = false, has_hint = false;
          for (auto e : *expr) {
            const JsonPlace r = q.member(e.key);
            if (e.key == "expr_str") {
              NRT_TRY(s, as_string(e.value, r));
              if (s->empty()) return json_error(r, "expr_str is empty");
              value->sym->expr = std::string(*s);
              has_expr = true;
            } else if (e.key == "hint") {
              has_hint = true;
              if (is_null(e.value)) {
                build_.read.style->observe(OptionalField::kSymExprHint, false, build_.read.warnings);
                continue;
              }
              NRT_TRY(hint, as_union(e.value, r, "SymExprHint"));
              const JsonPlace h = r.member(hint->key);
              if (hint->key == "as_int") {
                NRT_TRY(v, as_int64(hint->value, h));
                value->sym->int_hint = *v;
              } else if (hint->key == "as_float") {
                NRT_TRY(v, as_float(hint->value, h));
                value->sym->float_hint = *v;
              } else if (hint->key == "as_bool") {
                NRT_TRY(v, as_bool(hint->value, h));
                value->sym->bool_hint = *v;
              } else {
                return make_error(codes::kUnknownUnionMember,
                                  r.str() + ": unknown SymExprHint member '" + std::string(hint->key) + "'");
              }
            } else {
              build_.read.warnings->unknown_field("SymExpr", e.key, q);
            }
          }
          if (!has_expr) return missing_field(q, "SymExpr", "expr_str");
          if (!has_hint) build_.read.style->observe(OptionalField::kSymExprHint, true, build_.read.warnings);
        } else {
          return make_error(codes::kUnknownUnionMember,
                            p.str() + ": unknown symbolic value member '" + std::string(m->key) + "'");
        }
      }
      NRT_RETURN_IF_ERROR(declare(field.key, std::move(value), p));
    }
  }
  return {};
}

Status GraphImporter::read_named_argument(JsonElement json, const JsonPlace& place, fb::NodeT* node) {
  NRT_TRY(object, as_object(json, place));
  auto named = std::make_unique<fb::NamedArgumentT>();
  bool has_name = false, has_arg = false, has_kind = false;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "name") {
      NRT_TRY(s, as_string(field.value, at));
      named->name = std::string(*s);
      has_name = true;
    } else if (k == "arg") {
      NRT_TRY(arg, argument(field.value, at));
      named->arg = std::move(*arg);
      has_arg = true;
    } else if (k == "kind") {
      has_kind = true;
      if (is_null(field.value)) {
        build_.read.style->observe(OptionalField::kArgumentKind, false, build_.read.warnings);
        continue;
      }
      NRT_TRY(v, as_int64(field.value, at));
      if (*v < 0 || *v > 2) return make_error(codes::kUnmappedEnumValue, at.str() + ": ArgumentKind " + std::to_string(*v));
      named->kind = static_cast<fb::ArgumentKind>(*v);  // same numbering: UNKNOWN, POSITIONAL, KEYWORD
    } else {
      build_.read.warnings->unknown_field("NamedArgument", k, place);
    }
  }
  if (!has_name) return missing_field(place, "NamedArgument", "name");
  if (!has_arg) return missing_field(place, "NamedArgument", "arg");
  if (!has_kind) build_.read.style->observe(OptionalField::kArgumentKind, true, build_.read.warnings);
  node->inputs.push_back(std::move(named));
  return {};
}

Status GraphImporter::read_node(JsonElement json, const JsonPlace& place) {
  NRT_TRY(object, as_object(json, place));
  auto node = std::make_unique<fb::NodeT>();
  bool has_target = false, has_inputs = false, has_outputs = false, has_metadata = false, has_name = false,
       has_hop = false;
  std::optional<bool> is_hop_single_tensor_return;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "target") {
      NRT_TRY(target, as_string(field.value, at));
      NRT_TRY(op, operator_index(*target, at));
      node->op = *op;
      has_target = true;
    } else if (k == "inputs") {
      NRT_TRY(array, as_array(field.value, at));
      node->inputs.reserve(array->size());
      size_t i = 0;
      for (JsonElement item : *array) {
        NRT_RETURN_IF_ERROR(read_named_argument(item, at.item(i++), node.get()));
      }
      has_inputs = true;
    } else if (k == "outputs") {
      NRT_TRY(array, as_array(field.value, at));
      node->outputs.reserve(array->size());
      size_t i = 0;
      for (JsonElement item : *array) {
        NRT_TRY(arg, argument(item, at.item(i++)));
        node->outputs.push_back(std::make_unique<fb::ArgumentHolderT>());
        node->outputs.back()->arg = std::move(*arg);
      }
      has_outputs = true;
    } else if (k == "metadata") {
      NRT_TRY(metadata, as_object(field.value, at));
      node->metadata.reserve(metadata->size() + 1);
      for (auto entry : *metadata) {
        NRT_TRY(value, as_string(entry.value, at.member(entry.key)));
        if (entry.key.substr(0, 5) == "nrt::") {
          return json_error(at.member(entry.key), "metadata keys starting with 'nrt::' are reserved for nrt");
        }
        auto kv = std::make_unique<fb::KeyValueT>();
        kv->key = std::string(entry.key);
        kv->value = std::string(*value);
        node->metadata.push_back(std::move(kv));
      }
      has_metadata = true;
    } else if (k == "is_hop_single_tensor_return") {
      has_hop = true;
      if (!is_null(field.value)) {
        NRT_TRY(v, as_bool(field.value, at));
        is_hop_single_tensor_return = *v;
      } else {
        build_.read.style->observe(OptionalField::kNodeIsHopSingleTensorReturn, false, build_.read.warnings);
      }
    } else if (k == "name") {
      has_name = true;
      if (!is_null(field.value)) {
        NRT_TRY(name, as_string(field.value, at));
        node->name = std::string(*name);
      } else {
        build_.read.style->observe(OptionalField::kNodeName, false, build_.read.warnings);
      }
    } else {
      build_.read.warnings->unknown_field("Node", k, place);
    }
  }
  if (!has_target) return missing_field(place, "Node", "target");
  if (!has_inputs) return missing_field(place, "Node", "inputs");
  if (!has_outputs) return missing_field(place, "Node", "outputs");
  if (!has_metadata) return missing_field(place, "Node", "metadata");
  if (!has_hop) build_.read.style->observe(OptionalField::kNodeIsHopSingleTensorReturn, true, build_.read.warnings);
  if (!has_name) build_.read.style->observe(OptionalField::kNodeName, true, build_.read.warnings);
  if (is_hop_single_tensor_return) {
    auto kv = std::make_unique<fb::KeyValueT>();
    kv->key = std::string(kIsHopSingleTensorReturnKey);
    kv->value = *is_hop_single_tensor_return ? "true" : "false";
    node->metadata.push_back(std::move(kv));
  }
  graph_->nodes.push_back(std::move(node));
  return {};
}

Result<uint32_t> GraphImporter::run(JsonElement json, std::string name, const JsonPlace& place) {
  NRT_TRY(object, as_object(json, place));
  auto& graphs = build_.program->graphs;
  if (build_.graphs.count(name)) {
    return make_error(codes::kDuplicateName, place.str() + ": a graph named '" + name + "' exists already");
  }
  const auto index = static_cast<uint32_t>(graphs.size());
  graphs.push_back(std::make_unique<fb::GraphT>());
  graph_ = graphs.back().get();
  graph_->name = name;
  build_.graphs.emplace(std::move(name), index);

  NRT_RETURN_IF_ERROR(read_values(*object, place));

  bool has_inputs = false, has_outputs = false, has_nodes = false, has_single = false;
  for (auto field : *object) {
    const std::string_view k = field.key;
    const JsonPlace at = place.member(k);
    if (k == "inputs" || k == "outputs") {
      NRT_TRY(array, as_array(field.value, at));
      auto& slots = k == "inputs" ? graph_->inputs : graph_->outputs;
      slots.reserve(array->size());
      size_t i = 0;
      for (JsonElement item : *array) {
        NRT_TRY(arg, argument(item, at.item(i++)));
        slots.push_back(std::make_unique<fb::ArgumentHolderT>());
        slots.back()->arg = std::move(*arg);
      }
      (k == "inputs" ? has_inputs : has_outputs) = true;
    } else if (k == "nodes") {
      NRT_TRY(array, as_array(field.value, at));
      graph_->nodes.reserve(array->size());
      size_t i = 0;
      for (JsonElement item : *array) {
        NRT_RETURN_IF_ERROR(read_node(item, at.item(i++)));
      }
      has_nodes = true;
    } else if (k == "is_single_tensor_return") {
      NRT_TRY(v, as_bool(field.value, at));
      if (*v) build_.single_tensor_return_graphs.push_back(graph_->name);
      has_single = true;
    } else if (k != "tensor_values" && k != "sym_int_values" && k != "sym_bool_values" && k != "sym_float_values" &&
               k != "custom_obj_values") {
      build_.read.warnings->unknown_field("Graph", k, place);
    }
  }
  if (!has_inputs) return missing_field(place, "Graph", "inputs");
  if (!has_outputs) return missing_field(place, "Graph", "outputs");
  if (!has_nodes) return missing_field(place, "Graph", "nodes");
  build_.read.style->observe(OptionalField::kGraphIsSingleTensorReturn, !has_single, build_.read.warnings);
  return index;
}

}  // namespace nrt::torch_export
