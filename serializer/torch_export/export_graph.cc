#include "serializer/torch_export/export_graph.h"

#include <algorithm>
#include <map>

#include "serializer/torch_export/enum_tables.h"
#include "serializer/torch_export/import_graph.h"
#include "serializer/torch_export/operator_target.h"
#include "serializer/torch_export/tensor_meta_json.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

constexpr int kMaxDepth = 32;

Error not_expressible(const std::string& where, const std::string& what) {
  return make_error(codes::kNotExpressible, where + ": " + what + " has no torch.export JSON form");
}

// torch.export names a subgraph by its attribute name; nrt by "<parent>/<name>".
std::string_view subgraph_attribute(std::string_view graph_name) {
  const size_t slash = graph_name.rfind('/');
  return slash == std::string_view::npos ? graph_name : graph_name.substr(slash + 1);
}

class GraphWriter {
 public:
  GraphWriter(const fb::ProgramT& program, const TorchGraphStyle& style, JsonWriter& w)
      : program_(program), style_(style.none), single_return_(style.single_tensor_return_graphs), w_(w) {
    subgraph_names_.emplace_back();  // for an argument written outside any graph (a signature's)
  }

  Status graph(uint32_t index, int depth) {
    if (index >= program_.graphs.size()) {
      return make_error(ErrorCode::GraphIndexOutOfRange, "graph index " + std::to_string(index));
    }
    if (depth >= kMaxDepth) return make_error(ErrorCode::GraphRecursion, "subgraphs nest deeper than 32");
    const fb::GraphT& g = *program_.graphs[index];
    const std::string where = "graph '" + g.name + "'";
    subgraph_names_.emplace_back();  // the attribute names this graph's subgraphs get
    w_.begin_object();
    w_.key("inputs");
    NRT_RETURN_IF_ERROR(holders(g, g.inputs, depth, where + " input"));
    w_.key("outputs");
    NRT_RETURN_IF_ERROR(holders(g, g.outputs, depth, where + " output"));
    w_.key("nodes");
    w_.begin_array();
    for (size_t n = 0; n < g.nodes.size(); ++n) {
      NRT_RETURN_IF_ERROR(node(g, *g.nodes[n], depth, where + " node " + std::to_string(n)));
    }
    w_.end_array();
    NRT_RETURN_IF_ERROR(values(g, where));
    w_.end_object();
    subgraph_names_.pop_back();
    return {};
  }

  Status argument(const fb::GraphT& g, const fb::ArgumentUnion& arg, int depth, const std::string& where) {
    using A = fb::Argument;
    w_.begin_object();
    switch (arg.type) {
      case A::NONE:
        return make_error(ErrorCode::MissingField, where + ": argument slot holds nothing");
      case A::NoneArg:
        w_.key("as_none");
        w_.boolean(true);
        break;
      case A::TensorArg: {
        w_.key("as_tensor");
        NRT_RETURN_IF_ERROR(tensor_name(g, arg.AsTensorArg()->value, where));
        break;
      }
      case A::TensorListArg:
        w_.key("as_tensors");
        NRT_RETURN_IF_ERROR(tensor_list(g, arg.AsTensorListArg()->values, where));
        break;
      case A::IntArg:
        w_.key("as_int");
        w_.int64(arg.AsIntArg()->value);
        break;
      case A::IntListArg:
        w_.key("as_ints");
        int_list(arg.AsIntListArg()->values);
        break;
      case A::FloatArg:
        w_.key("as_float");
        w_.float64(arg.AsFloatArg()->value.value_or(0.0));
        break;
      case A::FloatListArg:
        w_.key("as_floats");
        float_list(arg.AsFloatListArg()->values);
        break;
      case A::StringArg:
        w_.key("as_string");
        w_.string(arg.AsStringArg()->value);
        break;
      case A::StringListArg:
        w_.key("as_strings");
        w_.begin_array();
        for (const auto& s : arg.AsStringListArg()->values) w_.string(s);
        w_.end_array();
        break;
      case A::SymIntArg: {
        const auto* a = arg.AsSymIntArg();
        w_.key("as_sym_int");
        NRT_RETURN_IF_ERROR(sym_item(g, a->value, where, [&] { w_.int64(a->literal); }, "as_int"));
        break;
      }
      case A::SymIntListArg:
        w_.key("as_sym_ints");
        w_.begin_array();
        for (const auto& item : arg.AsSymIntListArg()->items) {
          const int64_t literal = item.literal();
          NRT_RETURN_IF_ERROR(sym_item(g, item.value(), where, [&] { w_.int64(literal); }, "as_int"));
        }
        w_.end_array();
        break;
      case A::SymFloatArg: {
        const auto* a = arg.AsSymFloatArg();
        w_.key("as_sym_float");
        const double literal = a->literal.value_or(0.0);
        NRT_RETURN_IF_ERROR(sym_item(g, a->value, where, [&] { w_.float64(literal); }, "as_float"));
        break;
      }
      case A::SymFloatListArg:
        w_.key("as_sym_floats");
        w_.begin_array();
        for (const auto& item : arg.AsSymFloatListArg()->items) {
          const double literal = item.literal();
          NRT_RETURN_IF_ERROR(sym_item(g, item.value(), where, [&] { w_.float64(literal); }, "as_float"));
        }
        w_.end_array();
        break;
      case A::SymBoolArg: {
        const auto* a = arg.AsSymBoolArg();
        w_.key("as_sym_bool");
        NRT_RETURN_IF_ERROR(sym_item(g, a->value, where, [&] { w_.boolean(a->literal); }, "as_bool"));
        break;
      }
      case A::SymBoolListArg:
        w_.key("as_sym_bools");
        w_.begin_array();
        for (const auto& item : arg.AsSymBoolListArg()->items) {
          const bool literal = item.literal();
          NRT_RETURN_IF_ERROR(sym_item(g, item.value(), where, [&] { w_.boolean(literal); }, "as_bool"));
        }
        w_.end_array();
        break;
      case A::ScalarTypeArg: {
        auto v = scalar_type_to_schema(arg.AsScalarTypeArg()->value);
        if (!v) return make_error(v.error().code, where + ": " + v.error().message);
        w_.key("as_scalar_type");
        w_.int64(*v);
        break;
      }
      case A::MemoryFormatArg: {
        auto v = memory_format_to_schema(arg.AsMemoryFormatArg()->value);
        if (!v) return make_error(v.error().code, where + ": " + v.error().message);
        w_.key("as_memory_format");
        w_.int64(*v);
        break;
      }
      case A::LayoutArg: {
        auto v = layout_to_schema(arg.AsLayoutArg()->value);
        if (!v) return make_error(v.error().code, where + ": " + v.error().message);
        w_.key("as_layout");
        w_.int64(*v);
        break;
      }
      case A::DeviceArg:
        w_.key("as_device");
        if (Status s = write_device(w_, arg.AsDeviceArg()->value.get(), style_); !s) {
          return make_error(s.error().code, where + ": " + s.error().message);
        }
        break;
      case A::BoolArg:
        w_.key("as_bool");
        w_.boolean(arg.AsBoolArg()->value);
        break;
      case A::BoolListArg:
        w_.key("as_bools");
        w_.begin_array();
        for (const bool b : arg.AsBoolListArg()->values) w_.boolean(b);
        w_.end_array();
        break;
      case A::OptionalTensorListArg:
        w_.key("as_optional_tensors");
        w_.begin_array();
        for (const int32_t v : arg.AsOptionalTensorListArg()->values) {
          NRT_RETURN_IF_ERROR(optional_tensor(g, v, where));
        }
        w_.end_array();
        break;
      case A::OptionalTensorArg:
        w_.key("as_optional_tensor");
        NRT_RETURN_IF_ERROR(optional_tensor(g, arg.AsOptionalTensorArg()->value, where));
        break;
      case A::GraphArg: {
        const uint32_t sub = arg.AsGraphArg()->graph;
        if (sub >= program_.graphs.size()) {
          return make_error(ErrorCode::GraphIndexOutOfRange, where + ": subgraph " + std::to_string(sub));
        }
        // torch.export names a subgraph by its attribute on the parent: two different graphs may
        // not share one, or importing would take the second for the first.
        const std::string attribute(subgraph_attribute(program_.graphs[sub]->name));
        auto [named, fresh] = subgraph_names_.back().emplace(attribute, sub);
        if (!fresh && named->second != sub) {
          return not_expressible(where, "two different subgraphs named '" + attribute + "' in one graph");
        }
        w_.key("as_graph");
        w_.begin_object();
        w_.key("name");
        w_.string(attribute);
        w_.key("graph");
        NRT_RETURN_IF_ERROR(graph(sub, depth + 1));
        w_.end_object();
        break;
      }
      case A::CustomObjArg: {
        const auto* a = arg.AsCustomObjArg();
        NRT_TRY(name, value_name(g, a->value, where));
        w_.key("as_custom_obj");
        custom_obj(*name, a->class_fqn);
        break;
      }
      case A::OperatorArg: {
        const uint32_t op = arg.AsOperatorArg()->op;
        if (op >= program_.operators.size()) {
          return make_error(ErrorCode::OperatorIndexOutOfRange, where + ": operator " + std::to_string(op));
        }
        auto target = target_from_operator(*program_.operators[op]);
        if (!target) return make_error(target.error().code, where + ": " + target.error().message);
        w_.key("as_operator");
        w_.string(*target);
        break;
      }
      case A::ComplexArg: {
        const auto* a = arg.AsComplexArg();
        w_.key("as_complex");
        w_.begin_object();
        w_.key("real");
        w_.float64(a->real.value_or(0.0));
        w_.key("imag");
        w_.float64(a->imag.value_or(0.0));
        w_.end_object();
        break;
      }
      case A::NestedTensorsArg:
        w_.key("as_nested_tensors");
        w_.begin_array();
        for (const auto& list : arg.AsNestedTensorsArg()->lists) {
          NRT_RETURN_IF_ERROR(tensor_list(g, list->values, where));
        }
        w_.end_array();
        break;
      case A::IntListListArg:
        w_.key("as_int_lists");
        w_.begin_array();
        for (const auto& list : arg.AsIntListListArg()->lists) int_list(list->values);
        w_.end_array();
        break;
      case A::StringToArgumentArg:
        if (depth >= kMaxDepth) return make_error(ErrorCode::GraphRecursion, where + ": arguments nest too deeply");
        w_.key("as_string_to_argument");
        w_.begin_object();
        for (const auto& entry : arg.AsStringToArgumentArg()->entries) {
          w_.key(entry->key);
          NRT_RETURN_IF_ERROR(argument(g, entry->value, depth + 1, where + " key '" + entry->key + "'"));
        }
        w_.end_object();
        break;
      case A::FloatListListArg:
        w_.key("as_float_lists");
        w_.begin_array();
        for (const auto& list : arg.AsFloatListListArg()->lists) float_list(list->values);
        w_.end_array();
        break;
      case A::ProcessGroupArg: {
        const uint32_t group = arg.AsProcessGroupArg()->group;
        if (group >= program_.process_groups.size()) {
          return make_error(ErrorCode::GroupIndexOutOfRange, where + ": process group " + std::to_string(group));
        }
        w_.key("as_string");  // functional collectives take the group's name
        w_.string(program_.process_groups[group]->name);
        break;
      }
      case A::ValueArg:
        NRT_RETURN_IF_ERROR(value_reference(g, arg.AsValueArg()->value, where));
        break;
      default:
        return make_error(ErrorCode::UnknownArgumentKind,
                          where + ": argument member " + std::to_string(static_cast<int>(arg.type)));
    }
    w_.end_object();
    return {};
  }

 private:
  Result<std::string_view> value_name(const fb::GraphT& g, int64_t index, const std::string& where) const {
    if (index < 0 || static_cast<size_t>(index) >= g.values.size()) {
      return make_error(ErrorCode::ValueIndexOutOfRange, where + ": value index " + std::to_string(index));
    }
    return std::string_view(g.values[static_cast<size_t>(index)]->name);
  }

  Status tensor_name(const fb::GraphT& g, int64_t index, const std::string& where) {
    NRT_TRY(name, value_name(g, index, where));
    w_.begin_object();
    w_.key("name");
    w_.string(*name);
    w_.end_object();
    return {};
  }

  Status tensor_list(const fb::GraphT& g, const std::vector<uint32_t>& values, const std::string& where) {
    w_.begin_array();
    for (const uint32_t v : values) {
      NRT_RETURN_IF_ERROR(tensor_name(g, v, where));
    }
    w_.end_array();
    return {};
  }

  void int_list(const std::vector<int64_t>& values) {
    w_.begin_array();
    for (const int64_t v : values) w_.int64(v);
    w_.end_array();
  }

  void float_list(const std::vector<double>& values) {
    w_.begin_array();
    for (const double v : values) w_.float64(v);
    w_.end_array();
  }

  void custom_obj(std::string_view name, std::string_view class_fqn) {
    w_.begin_object();
    w_.key("name");
    w_.string(name);
    w_.key("class_fqn");
    w_.string(class_fqn);
    w_.end_object();
  }

  // {"as_name": value} for a reference (index >= 0), {literal_member: literal} otherwise.
  template <typename WriteLiteral>
  Status sym_item(const fb::GraphT& g, int32_t index, const std::string& where, WriteLiteral write_literal,
                  std::string_view literal_member) {
    w_.begin_object();
    if (index >= 0) {
      NRT_TRY(name, value_name(g, index, where));
      w_.key("as_name");
      w_.string(*name);
    } else {
      w_.key(literal_member);
      write_literal();
    }
    w_.end_object();
    return {};
  }

  Status optional_tensor(const fb::GraphT& g, int32_t index, const std::string& where) {
    w_.begin_object();
    if (index < 0) {
      w_.key("as_none");
      w_.boolean(true);
    } else {
      w_.key("as_tensor");
      NRT_RETURN_IF_ERROR(tensor_name(g, index, where));
    }
    w_.end_object();
    return {};
  }

  // A ValueArg: written as the torch reference its value's kind calls for.
  Status value_reference(const fb::GraphT& g, uint32_t index, const std::string& where) {
    NRT_TRY(name, value_name(g, index, where));
    const fb::ValueT& value = *g.values[index];
    switch (value.kind) {
      case fb::ValueKind::TENSOR:
      case fb::ValueKind::OPTIONAL_TENSOR:
        w_.key("as_tensor");
        return tensor_name(g, index, where);
      case fb::ValueKind::SYM_INT:
      case fb::ValueKind::SYM_FLOAT:
      case fb::ValueKind::SYM_BOOL:
        w_.key(value.kind == fb::ValueKind::SYM_INT     ? "as_sym_int"
               : value.kind == fb::ValueKind::SYM_FLOAT ? "as_sym_float"
                                                        : "as_sym_bool");
        w_.begin_object();
        w_.key("as_name");
        w_.string(*name);
        w_.end_object();
        return {};
      case fb::ValueKind::CUSTOM_OBJ:
        w_.key("as_custom_obj");
        custom_obj(*name, value.class_fqn);
        return {};
      default:
        return not_expressible(where, "a reference to value '" + value.name + "' of kind " +
                                          fb::EnumNameValueKind(value.kind));
    }
  }

  Status holders(const fb::GraphT& g, const std::vector<std::unique_ptr<fb::ArgumentHolderT>>& slots, int depth,
                 const std::string& where) {
    w_.begin_array();
    for (size_t i = 0; i < slots.size(); ++i) {
      NRT_RETURN_IF_ERROR(argument(g, slots[i]->arg, depth, where + " " + std::to_string(i)));
    }
    w_.end_array();
    return {};
  }

  Status node(const fb::GraphT& g, const fb::NodeT& n, int depth, const std::string& where) {
    if (n.op >= program_.operators.size()) {
      return make_error(ErrorCode::OperatorIndexOutOfRange, where + ": operator " + std::to_string(n.op));
    }
    auto target = target_from_operator(*program_.operators[n.op]);
    if (!target) return make_error(target.error().code, where + ": " + target.error().message);
    w_.begin_object();
    w_.key("target");
    w_.string(*target);
    w_.key("inputs");
    w_.begin_array();
    for (size_t i = 0; i < n.inputs.size(); ++i) {
      const fb::NamedArgumentT& named = *n.inputs[i];
      w_.begin_object();
      w_.key("name");
      w_.string(named.name);
      w_.key("arg");
      NRT_RETURN_IF_ERROR(argument(g, named.arg, depth, where + " argument " + std::to_string(i)));
      if (named.kind != fb::ArgumentKind::UNKNOWN) {
        w_.key("kind");
        w_.int64(static_cast<int64_t>(named.kind));
      } else if (!style_.omitted(OptionalField::kArgumentKind)) {
        w_.key("kind");
        w_.null();
      }
      w_.end_object();
    }
    w_.end_array();
    w_.key("outputs");
    NRT_RETURN_IF_ERROR(holders(g, n.outputs, depth, where + " result"));
    w_.key("metadata");
    w_.begin_object();
    const std::string* is_hop = nullptr;
    for (const auto& kv : n.metadata) {
      if (kv->key == kIsHopSingleTensorReturnKey) {
        is_hop = &kv->value;
        continue;
      }
      w_.key(kv->key);
      w_.string(kv->value);
    }
    w_.end_object();
    if (is_hop != nullptr) {
      w_.key("is_hop_single_tensor_return");
      w_.boolean(*is_hop == "true");
    } else if (!style_.omitted(OptionalField::kNodeIsHopSingleTensorReturn)) {
      w_.key("is_hop_single_tensor_return");
      w_.null();
    }
    if (!n.name.empty()) {
      w_.key("name");
      w_.string(n.name);
    } else if (!style_.omitted(OptionalField::kNodeName)) {
      w_.key("name");
      w_.null();
    }
    w_.end_object();
    return {};
  }

  void sym_hint(const fb::SymInfoT& sym) {
    if (sym.int_hint.has_value()) {
      w_.key("hint");
      w_.begin_object();
      w_.key("as_int");
      w_.int64(*sym.int_hint);
      w_.end_object();
    } else if (sym.float_hint.has_value()) {
      w_.key("hint");
      w_.begin_object();
      w_.key("as_float");
      w_.float64(*sym.float_hint);
      w_.end_object();
    } else if (sym.bool_hint.has_value()) {
      w_.key("hint");
      w_.begin_object();
      w_.key("as_bool");
      w_.boolean(*sym.bool_hint);
      w_.end_object();
    } else if (!style_.omitted(OptionalField::kSymExprHint)) {
      w_.key("hint");
      w_.null();
    }
  }

  // SymInt / SymFloat / SymBool of a sym_*_values table: a literal when there is no expression.
  void sym_value(const fb::ValueT& value) {
    w_.begin_object();
    const fb::SymInfoT* sym = value.sym.get();
    if (sym != nullptr && sym->expr.empty()) {
      switch (value.kind) {
        case fb::ValueKind::SYM_INT:
          w_.key("as_int");
          w_.int64(sym->int_hint.value_or(0));
          break;
        case fb::ValueKind::SYM_FLOAT:
          w_.key("as_float");
          w_.float64(sym->float_hint.value_or(0.0));
          break;
        default:
          w_.key("as_bool");
          w_.boolean(sym->bool_hint.value_or(false));
      }
    } else {
      // Without SymInfo the value is a free symbol; it is named after the value.
      w_.key("as_expr");
      w_.begin_object();
      w_.key("expr_str");
      w_.string(sym != nullptr ? sym->expr : value.name);
      if (sym != nullptr) {
        sym_hint(*sym);
      } else if (!style_.omitted(OptionalField::kSymExprHint)) {
        w_.key("hint");
        w_.null();
      }
      w_.end_object();
    }
    w_.end_object();
  }

  Status values(const fb::GraphT& g, const std::string& where) {
    for (const auto& value : g.values) {
      switch (value->kind) {
        case fb::ValueKind::TENSOR:
        case fb::ValueKind::OPTIONAL_TENSOR:
        case fb::ValueKind::SYM_INT:
        case fb::ValueKind::SYM_FLOAT:
        case fb::ValueKind::SYM_BOOL:
        case fb::ValueKind::CUSTOM_OBJ:
        case fb::ValueKind::NONE:
          break;
        default:
          return not_expressible(where, "value '" + value->name + "' of kind " + fb::EnumNameValueKind(value->kind));
      }
    }
    auto table = [&](std::string_view key, auto accepts, auto write_one) -> Status {
      w_.key(key);
      w_.begin_object();
      for (const auto& value : g.values) {
        if (!accepts(value->kind)) continue;
        w_.key(value->name);
        NRT_RETURN_IF_ERROR(write_one(*value));
      }
      w_.end_object();
      return {};
    };
    auto is = [](fb::ValueKind want) { return [want](fb::ValueKind k) { return k == want; }; };
    auto write_sym = [this](const fb::ValueT& v) -> Status {
      sym_value(v);
      return {};
    };
    auto any = [&g](fb::ValueKind want) {
      return std::any_of(g.values.begin(), g.values.end(), [want](const auto& v) { return v->kind == want; });
    };
    Status s = table(
        "tensor_values",
        [](fb::ValueKind k) { return k == fb::ValueKind::TENSOR || k == fb::ValueKind::OPTIONAL_TENSOR; },
        [&](const fb::ValueT& v) { return write_tensor_meta(w_, v.tensor.get(), style_, where + " value '" + v.name + "'"); });
    if (!s) return s;
    if (s = table("sym_int_values", is(fb::ValueKind::SYM_INT), write_sym); !s) return s;
    if (s = table("sym_bool_values", is(fb::ValueKind::SYM_BOOL), write_sym); !s) return s;
    const bool single = single_return_.count(g.name) > 0;
    if (single || !style_.omitted(OptionalField::kGraphIsSingleTensorReturn)) {
      w_.key("is_single_tensor_return");
      w_.boolean(single);
    }
    if (any(fb::ValueKind::CUSTOM_OBJ) || !style_.omitted(OptionalField::kGraphCustomObjValues)) {
      s = table("custom_obj_values", is(fb::ValueKind::CUSTOM_OBJ), [this](const fb::ValueT& v) -> Status {
        custom_obj(v.name, v.class_fqn);
        return {};
      });
      if (!s) return s;
    }
    if (any(fb::ValueKind::SYM_FLOAT) || !style_.omitted(OptionalField::kGraphSymFloatValues)) {
      if (s = table("sym_float_values", is(fb::ValueKind::SYM_FLOAT), write_sym); !s) return s;
    }
    return {};
  }

  const fb::ProgramT& program_;
  const NoneStyle& style_;
  const std::set<std::string>& single_return_;
  JsonWriter& w_;
  std::vector<std::map<std::string, uint32_t>> subgraph_names_;  // per graph being written
};

}  // namespace

Status write_torch_graph(JsonWriter& w, const fb::ProgramT& program, uint32_t graph, const TorchGraphStyle& style) {
  return GraphWriter(program, style, w).graph(graph, 0);
}

Status write_torch_argument(JsonWriter& w, const fb::ProgramT& program, const fb::GraphT& graph,
                            const fb::ArgumentUnion& arg, const TorchGraphStyle& style, const std::string& where) {
  return GraphWriter(program, style, w).argument(graph, arg, 0, where);
}

}  // namespace nrt::torch_export
