// GraphImporter::argument: every Argument member of torch.export schema 8.20 into its nrt
// Argument (import_graph.h has the class and its contract). Names become value indices of the
// graph being imported; enums go through enum_tables.h; `as_graph` imports the subgraph.
#include <algorithm>

#include "serializer/torch_export/enum_tables.h"
#include "serializer/torch_export/import_graph.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

constexpr int kMaxArgumentNesting = 16;  // nested as_string_to_argument maps

enum class Member {
  kNone, kTensor, kTensors, kInt, kInts, kFloat, kFloats, kString, kStrings, kSymInt, kSymInts,
  kScalarType, kMemoryFormat, kLayout, kDevice, kBool, kBools, kSymBool, kSymBools, kOptionalTensors,
  kGraph, kCustomObj, kOperator, kSymFloat, kSymFloats, kOptionalTensor, kComplex, kNestedTensors,
  kIntLists, kStringToArgument, kFloatLists,
};

// The Argument members of torch.export schema 8.20 (torch/_export/serde/schema.py).
const std::unordered_map<std::string_view, Member>& argument_members() {
  static const std::unordered_map<std::string_view, Member> members = {
      {"as_none", Member::kNone},
      {"as_tensor", Member::kTensor},
      {"as_tensors", Member::kTensors},
      {"as_int", Member::kInt},
      {"as_ints", Member::kInts},
      {"as_float", Member::kFloat},
      {"as_floats", Member::kFloats},
      {"as_string", Member::kString},
      {"as_strings", Member::kStrings},
      {"as_sym_int", Member::kSymInt},
      {"as_sym_ints", Member::kSymInts},
      {"as_scalar_type", Member::kScalarType},
      {"as_memory_format", Member::kMemoryFormat},
      {"as_layout", Member::kLayout},
      {"as_device", Member::kDevice},
      {"as_bool", Member::kBool},
      {"as_bools", Member::kBools},
      {"as_sym_bool", Member::kSymBool},
      {"as_sym_bools", Member::kSymBools},
      {"as_optional_tensors", Member::kOptionalTensors},
      {"as_graph", Member::kGraph},
      {"as_custom_obj", Member::kCustomObj},
      {"as_operator", Member::kOperator},
      {"as_sym_float", Member::kSymFloat},
      {"as_sym_floats", Member::kSymFloats},
      {"as_optional_tensor", Member::kOptionalTensor},
      {"as_complex", Member::kComplex},
      {"as_nested_tensors", Member::kNestedTensors},
      {"as_int_lists", Member::kIntLists},
      {"as_string_to_argument", Member::kStringToArgument},
      {"as_float_lists", Member::kFloatLists},
  };
  return members;
}


template <typename T>
fb::ArgumentUnion union_of(T&& arg) {
  fb::ArgumentUnion u;
  u.Set(std::forward<T>(arg));
  return u;
}

// Reads every item of a JSON array with `read(item, place)` into `out`.
template <typename Item, typename Read>
Status read_list(JsonElement json, const JsonPlace& place, std::vector<Item>* out, Read read) {
  NRT_TRY(array, as_array(json, place));
  out->reserve(array->size());
  size_t i = 0;
  for (JsonElement item : *array) {
    NRT_TRY(value, read(item, place.item(i++)));
    out->push_back(std::move(*value));
  }
  return {};
}

// A union of a name and a literal: SymIntArgument{as_name|as_int}, SymFloatArgument{as_name|
// as_float}, SymBoolArgument{as_name|as_bool}. Returns the member name and its value.
Result<simdjson::dom::key_value_pair> sym_member(JsonElement json, const JsonPlace& place, std::string_view union_name,
                                                 std::string_view literal_member) {
  NRT_TRY(member, as_union(json, place, union_name));
  if (member->key != "as_name" && member->key != literal_member) {
    return make_error(codes::kUnknownUnionMember, place.str() + ": unknown " + std::string(union_name) + " member '" +
                                                      std::string(member->key) + "'");
  }
  return member;
}

}  // namespace

Result<fb::ArgumentUnion> GraphImporter::argument(JsonElement json, const JsonPlace& place, int nesting) {
  NRT_TRY(union_member, as_union(json, place, "Argument"));
  const std::string_view key = union_member->key;
  const JsonElement value = union_member->value;
  const JsonPlace at = place.member(key);
  const auto& members = argument_members();
  const auto found = members.find(key);
  if (found == members.end()) {
    return make_error(codes::kUnknownUnionMember,
                      place.str() + ": unknown Argument member '" + std::string(key) + "'");
  }
  auto sym_reference = [this](const simdjson::dom::key_value_pair& m, const JsonPlace& p) -> Result<uint32_t> {
    NRT_TRY(name, as_string(m.value, p.member(m.key)));
    return reference(*name, p.member(m.key));
  };
  switch (found->second) {
    case Member::kNone: {
      NRT_RETURN_IF_ERROR(as_bool(value, at));
      return union_of(fb::NoneArgT{});
    }
    case Member::kTensor: {
      NRT_TRY(index, tensor_reference(value, at));
      fb::TensorArgT arg;
      arg.value = *index;
      return union_of(std::move(arg));
    }
    case Member::kTensors: {
      fb::TensorListArgT arg;
      auto read = [this](JsonElement item, const JsonPlace& p) { return tensor_reference(item, p); };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.values, read));
      return union_of(std::move(arg));
    }
    case Member::kInt: {
      NRT_TRY(v, as_int64(value, at));
      fb::IntArgT arg;
      arg.value = *v;
      return union_of(std::move(arg));
    }
    case Member::kInts: {
      fb::IntListArgT arg;
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.values, as_int64));
      return union_of(std::move(arg));
    }
    case Member::kFloat: {
      NRT_TRY(v, as_float(value, at));
      fb::FloatArgT arg;
      arg.value = *v;
      return union_of(std::move(arg));
    }
    case Member::kFloats: {
      fb::FloatListArgT arg;
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.values, as_float));
      return union_of(std::move(arg));
    }
    case Member::kString: {
      NRT_TRY(v, as_string(value, at));
      fb::StringArgT arg;
      arg.value = std::string(*v);
      return union_of(std::move(arg));
    }
    case Member::kStrings: {
      fb::StringListArgT arg;
      auto read = [](JsonElement item, const JsonPlace& p) -> Result<std::string> {
        NRT_TRY(s, as_string(item, p));
        return std::string(*s);
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.values, read));
      return union_of(std::move(arg));
    }
    case Member::kSymInt: {
      NRT_TRY(m, sym_member(value, at, "SymIntArgument", "as_int"));
      fb::SymIntArgT arg;
      if (m->key == "as_name") {
        NRT_TRY(index, sym_reference(*m, at));
        arg.value = static_cast<int32_t>(*index);
      } else {
        NRT_TRY(literal, as_int64(m->value, at.member(m->key)));
        arg.literal = *literal;
      }
      return union_of(std::move(arg));
    }
    case Member::kSymInts: {
      fb::SymIntListArgT arg;
      auto read = [&](JsonElement item, const JsonPlace& p) -> Result<fb::SymIntItem> {
        NRT_TRY(m, sym_member(item, p, "SymIntArgument", "as_int"));
        if (m->key == "as_name") {
          NRT_TRY(index, sym_reference(*m, p));
          return fb::SymIntItem(static_cast<int32_t>(*index), 0);
        }
        NRT_TRY(literal, as_int64(m->value, p.member(m->key)));
        return fb::SymIntItem(-1, *literal);
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.items, read));
      return union_of(std::move(arg));
    }
    case Member::kSymFloat: {
      NRT_TRY(m, sym_member(value, at, "SymFloatArgument", "as_float"));
      fb::SymFloatArgT arg;
      if (m->key == "as_name") {
        NRT_TRY(index, sym_reference(*m, at));
        arg.value = static_cast<int32_t>(*index);
      } else {
        NRT_TRY(literal, as_float(m->value, at.member(m->key)));
        arg.literal = *literal;
      }
      return union_of(std::move(arg));
    }
    case Member::kSymFloats: {
      fb::SymFloatListArgT arg;
      auto read = [&](JsonElement item, const JsonPlace& p) -> Result<fb::SymFloatItem> {
        NRT_TRY(m, sym_member(item, p, "SymFloatArgument", "as_float"));
        if (m->key == "as_name") {
          NRT_TRY(index, sym_reference(*m, p));
          return fb::SymFloatItem(static_cast<int32_t>(*index), 0.0);
        }
        NRT_TRY(literal, as_float(m->value, p.member(m->key)));
        return fb::SymFloatItem(-1, *literal);
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.items, read));
      return union_of(std::move(arg));
    }
    case Member::kSymBool: {
      NRT_TRY(m, sym_member(value, at, "SymBoolArgument", "as_bool"));
      fb::SymBoolArgT arg;
      if (m->key == "as_name") {
        NRT_TRY(index, sym_reference(*m, at));
        arg.value = static_cast<int32_t>(*index);
      } else {
        NRT_TRY(literal, as_bool(m->value, at.member(m->key)));
        arg.literal = *literal;
      }
      return union_of(std::move(arg));
    }
    case Member::kSymBools: {
      fb::SymBoolListArgT arg;
      auto read = [&](JsonElement item, const JsonPlace& p) -> Result<fb::SymBoolItem> {
        NRT_TRY(m, sym_member(item, p, "SymBoolArgument", "as_bool"));
        if (m->key == "as_name") {
          NRT_TRY(index, sym_reference(*m, p));
          return fb::SymBoolItem(static_cast<int32_t>(*index), false);
        }
        NRT_TRY(literal, as_bool(m->value, p.member(m->key)));
        return fb::SymBoolItem(-1, *literal);
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.items, read));
      return union_of(std::move(arg));
    }
    case Member::kScalarType: {
      NRT_TRY(v, as_int64(value, at));
      auto type = scalar_type_from_schema(*v);
      if (!type) return prefixed(at, type.error());
      fb::ScalarTypeArgT arg;
      arg.value = *type;
      return union_of(std::move(arg));
    }
    case Member::kMemoryFormat: {
      NRT_TRY(v, as_int64(value, at));
      auto format = memory_format_from_schema(*v);
      if (!format) return prefixed(at, format.error());
      fb::MemoryFormatArgT arg;
      arg.value = *format;
      return union_of(std::move(arg));
    }
    case Member::kLayout: {
      NRT_TRY(v, as_int64(value, at));
      auto layout = layout_from_schema(*v);
      if (!layout) return prefixed(at, layout.error());
      fb::LayoutArgT arg;
      arg.value = *layout;
      return union_of(std::move(arg));
    }
    case Member::kDevice: {
      NRT_TRY(device, read_device(value, at, build_.read));
      fb::DeviceArgT arg;
      arg.value = std::move(*device);
      return union_of(std::move(arg));
    }
    case Member::kBool: {
      NRT_TRY(v, as_bool(value, at));
      fb::BoolArgT arg;
      arg.value = *v;
      return union_of(std::move(arg));
    }
    case Member::kBools: {
      fb::BoolListArgT arg;
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.values, as_bool));
      return union_of(std::move(arg));
    }
    case Member::kOptionalTensors:
    case Member::kOptionalTensor: {
      // OptionalTensorArgument{as_tensor: TensorArgument | as_none: bool}; -1 stands for None.
      auto read = [this](JsonElement item, const JsonPlace& p) -> Result<int32_t> {
        NRT_TRY(m, as_union(item, p, "OptionalTensorArgument"));
        if (m->key == "as_none") {
          NRT_RETURN_IF_ERROR(as_bool(m->value, p.member(m->key)));
          return -1;
        }
        if (m->key != "as_tensor") {
          return make_error(codes::kUnknownUnionMember, p.str() + ": unknown OptionalTensorArgument member '" +
                                                            std::string(m->key) + "'");
        }
        NRT_TRY(index, tensor_reference(m->value, p.member(m->key)));
        return static_cast<int32_t>(*index);
      };
      if (found->second == Member::kOptionalTensor) {
        NRT_TRY(index, read(value, at));
        fb::OptionalTensorArgT arg;
        arg.value = *index;
        return union_of(std::move(arg));
      }
      fb::OptionalTensorListArgT arg;
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.values, read));
      return union_of(std::move(arg));
    }
    case Member::kGraph: {
      NRT_TRY(graph, subgraph(value, at));
      fb::GraphArgT arg;
      arg.graph = *graph;
      return union_of(std::move(arg));
    }
    case Member::kCustomObj: {
      NRT_TRY(object, as_object(value, at));
      std::optional<std::string_view> name, class_fqn;
      for (auto field : *object) {
        const JsonPlace p = at.member(field.key);
        if (field.key == "name" || field.key == "class_fqn") {
          NRT_TRY(s, as_string(field.value, p));
          (field.key == "name" ? name : class_fqn) = *s;
        } else {
          build_.read.warnings->unknown_field("CustomObjArgument", field.key, at);
        }
      }
      if (!name) return missing_field(at, "CustomObjArgument", "name");
      if (!class_fqn) return missing_field(at, "CustomObjArgument", "class_fqn");
      NRT_TRY(index, reference(*name, at));
      fb::CustomObjArgT arg;
      arg.value = *index;
      arg.class_fqn = std::string(*class_fqn);
      return union_of(std::move(arg));
    }
    case Member::kOperator: {
      NRT_TRY(target, as_string(value, at));
      NRT_TRY(op, operator_index(*target, at));
      fb::OperatorArgT arg;
      arg.op = *op;
      return union_of(std::move(arg));
    }
    case Member::kComplex: {
      NRT_TRY(object, as_object(value, at));
      fb::ComplexArgT arg;
      for (auto field : *object) {
        const JsonPlace p = at.member(field.key);
        if (field.key == "real" || field.key == "imag") {
          NRT_TRY(v, as_float(field.value, p));
          (field.key == "real" ? arg.real : arg.imag) = *v;
        } else {
          build_.read.warnings->unknown_field("ComplexValue", field.key, at);
        }
      }
      if (!arg.real.has_value()) return missing_field(at, "ComplexValue", "real");
      if (!arg.imag.has_value()) return missing_field(at, "ComplexValue", "imag");
      return union_of(std::move(arg));
    }
    case Member::kNestedTensors: {
      fb::NestedTensorsArgT arg;
      auto read = [this](JsonElement item, const JsonPlace& p) -> Result<std::unique_ptr<fb::TensorListArgT>> {
        auto list = std::make_unique<fb::TensorListArgT>();
        auto read_tensor = [this](JsonElement t, const JsonPlace& q) { return tensor_reference(t, q); };
        NRT_RETURN_IF_ERROR(read_list(item, p, &list->values, read_tensor));
        return list;
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.lists, read));
      return union_of(std::move(arg));
    }
    case Member::kIntLists: {
      fb::IntListListArgT arg;
      auto read = [](JsonElement item, const JsonPlace& p) -> Result<std::unique_ptr<fb::IntListArgT>> {
        auto list = std::make_unique<fb::IntListArgT>();
        NRT_RETURN_IF_ERROR(read_list(item, p, &list->values, as_int64));
        return list;
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.lists, read));
      return union_of(std::move(arg));
    }
    case Member::kFloatLists: {
      fb::FloatListListArgT arg;
      auto read = [](JsonElement item, const JsonPlace& p) -> Result<std::unique_ptr<fb::FloatListArgT>> {
        auto list = std::make_unique<fb::FloatListArgT>();
        NRT_RETURN_IF_ERROR(read_list(item, p, &list->values, as_float));
        return list;
      };
      NRT_RETURN_IF_ERROR(read_list(value, at, &arg.lists, read));
      return union_of(std::move(arg));
    }
    case Member::kStringToArgument: {
      if (nesting >= kMaxArgumentNesting) {
        return json_error(at, "string-to-argument maps nest deeper than " + std::to_string(kMaxArgumentNesting));
      }
      NRT_TRY(object, as_object(value, at));
      fb::StringToArgumentArgT arg;
      for (auto field : *object) {
        auto entry = std::make_unique<fb::StringToArgumentEntryT>();
        entry->key = std::string(field.key);
        NRT_TRY(inner, argument(field.value, at.member(field.key), nesting + 1));
        entry->value = std::move(*inner);
        arg.entries.push_back(std::move(entry));
      }
      // Sorted by key (the nrt schema's contract); JSON object order carries no meaning.
      std::sort(arg.entries.begin(), arg.entries.end(), [](const auto& a, const auto& b) { return a->key < b->key; });
      for (size_t i = 1; i < arg.entries.size(); ++i) {
        if (arg.entries[i]->key == arg.entries[i - 1]->key) {
          return make_error(codes::kDuplicateName, at.str() + ": key '" + arg.entries[i]->key + "' appears twice");
        }
      }
      return union_of(std::move(arg));
    }
  }
  return make_error(codes::kUnknownUnionMember, place.str() + ": unhandled Argument member");
}

}  // namespace nrt::torch_export
