// The checks of one graph: values and their metadata, references defined before use and of the
// right kind, every argument union member, node outputs, the signature against the graph.
#include <string>
#include <unordered_set>
#include <vector>

#include "serializer/argument_values.h"
#include "serializer/schema_access.h"
#include "serializer/verify_checks.h"

namespace nrt::verify {
namespace {

// Checks one graph; `where()` prefixes every message with the place being checked.
class GraphChecker {
 public:
  GraphChecker(const fb::Program& program, uint32_t graph_index, bool is_entry_point, WorkBudget& budget)
      : budget_(budget),
        program_(program),
        graph_(*program.graphs()->Get(graph_index)),
        graph_index_(graph_index),
        is_entry_point_(is_entry_point),
        num_values_(vector_size(graph_.values())),
        defined_(num_values_, false) {}

  Status run() {
    NRT_RETURN_IF_ERROR(check_values());
    place_ = "input";
    for (uint32_t i = 0; i < vector_size(graph_.inputs()); ++i) {
      item_ = i;
      const auto* holder = graph_.inputs()->Get(i);
      NRT_RETURN_IF_ERROR(define_from(holder->arg_type(), holder->arg(), /*allow_constant=*/true));
    }
    for (uint32_t n = 0; n < vector_size(graph_.nodes()); ++n) {
      NRT_RETURN_IF_ERROR(check_node(n));
    }
    place_ = "output";
    node_ = -1;
    for (uint32_t i = 0; i < vector_size(graph_.outputs()); ++i) {
      item_ = i;
      const auto* holder = graph_.outputs()->Get(i);
      NRT_RETURN_IF_ERROR(use(holder->arg_type(), holder->arg()));
    }
    return check_signature();
  }

 private:
  std::string where() const {
    std::string w = "graph " + quoted(graph_.name());
    if (node_ >= 0) {
      const auto* node = graph_.nodes()->Get(static_cast<uint32_t>(node_));
      w += " node " + std::to_string(node_);
      if (node->name()) w += " '" + node->name()->str() + "'";
    }
    if (!place_.empty()) w += " " + place_ + " " + std::to_string(item_);
    return w + ": ";
  }

  Error fail(ErrorCode code, const std::string& message) const { return make_error(code, where() + message); }

  // Tensor metadata checked with the place prefixed (check_tensor_meta names only the owner).
  template <typename WhatOf>
  Status check_meta(const fb::TensorMeta* meta, WhatOf&& what_of) const {
    Status s = check_tensor_meta(meta, budget_, what_of);
    return s ? s : fail(s.error().code, s.error().message);
  }

  Status check_values() {
    NRT_RETURN_IF_ERROR(check_unique_value_names());
    for (uint32_t v = 0; v < num_values_; ++v) {
      const auto* value = graph_.values()->Get(v);
      place_ = "value";
      item_ = v;
      auto what = [value] { return "value '" + value->name()->str() + "'"; };
      const fb::ValueKind kind = value->kind();
      switch (kind) {
        case fb::ValueKind::PROCESS_GROUP:
          if (value->process_group() < 0 ||
              static_cast<uint32_t>(value->process_group()) >= vector_size(program_.process_groups())) {
            return fail(ErrorCode::GroupIndexOutOfRange,
                        what() + " names process group " + std::to_string(value->process_group()) + " of " +
                            std::to_string(vector_size(program_.process_groups())));
          }
          break;
        case fb::ValueKind::GRAPH:
          if (value->graph() < 0 || static_cast<uint32_t>(value->graph()) >= vector_size(program_.graphs())) {
            return fail(ErrorCode::GraphIndexOutOfRange, what() + " names graph " + std::to_string(value->graph()) +
                                                             " of " + std::to_string(vector_size(program_.graphs())));
          }
          // A graph value makes its graph reachable just as a GraphArg does.
          subgraphs_.push_back(static_cast<uint32_t>(value->graph()));
          break;
        case fb::ValueKind::TENSOR:
        case fb::ValueKind::OPTIONAL_TENSOR:
        case fb::ValueKind::DTENSOR:
        case fb::ValueKind::TENSOR_LIST:
        case fb::ValueKind::OPTIONAL_TENSOR_LIST:
        case fb::ValueKind::SYM_INT:
        case fb::ValueKind::SYM_FLOAT:
        case fb::ValueKind::SYM_BOOL:
        case fb::ValueKind::CUSTOM_OBJ:
        case fb::ValueKind::NONE:
          break;
        default:
          return fail(ErrorCode::UnknownEnumValue,
                      what() + " kind " + std::to_string(static_cast<int>(kind)) + " is not a known ValueKind");
      }
      // Tensor metadata is checked wherever it is present, not only where the kind requires it:
      // readers that walk every field (structure hash, printer) read it all the same.
      if (is_tensor_kind(kind) || value->tensor() != nullptr) {
        NRT_RETURN_IF_ERROR(check_meta(value->tensor(), what));
      }
      for (uint32_t e = 0; e < vector_size(value->elements()); ++e) {
        auto element = [&] { return what() + " element " + std::to_string(e); };
        NRT_RETURN_IF_ERROR(check_meta(value->elements()->Get(e), element));
      }
      if (kind == fb::ValueKind::DTENSOR) {
        NRT_RETURN_IF_ERROR(check_dtensor(value, what()));
      }
      NRT_RETURN_IF_ERROR(check_foreign_references(value, what));
    }
    place_.clear();
    return {};
  }

  // `dtensor`, `process_group` and `graph` point into other tables and are checked on the kind
  // that owns them only. On another kind they must be absent: readers that walk every field (the
  // structure hash does) would follow them unchecked.
  template <typename WhatOf>
  Status check_foreign_references(const fb::Value* value, WhatOf&& what_of) const {
    const fb::ValueKind kind = value->kind();
    auto foreign = [&](const std::string& field, const char* owner) {
      return fail(ErrorCode::TypeMismatch, what_of() + " of kind " + fb::EnumNameValueKind(kind) + " carries " + field +
                                               ", which only " + owner + " values have");
    };
    if (kind != fb::ValueKind::DTENSOR && value->dtensor() != nullptr) return foreign("a DTensorSpec", "DTENSOR");
    if (kind != fb::ValueKind::PROCESS_GROUP && value->process_group() != -1) {
      return foreign("process group " + std::to_string(value->process_group()), "PROCESS_GROUP");
    }
    if (kind != fb::ValueKind::GRAPH && value->graph() != -1) {
      return foreign("graph " + std::to_string(value->graph()), "GRAPH");
    }
    return {};
  }

  // Value names are unique within a graph. Sorting hashes avoids a node allocation per name.
  Status check_unique_value_names() {
    std::vector<std::pair<size_t, uint32_t>> hashes(num_values_);
    for (uint32_t v = 0; v < num_values_; ++v) {
      hashes[v] = {std::hash<std::string_view>{}(graph_.values()->Get(v)->name()->string_view()), v};
    }
    std::sort(hashes.begin(), hashes.end());
    for (size_t i = 1; i < hashes.size(); ++i) {
      if (hashes[i].first != hashes[i - 1].first) continue;
      for (size_t j = i; j-- > 0 && hashes[j].first == hashes[i].first;) {
        const auto* a = graph_.values()->Get(hashes[j].second);
        const auto* b = graph_.values()->Get(hashes[i].second);
        if (a->name()->string_view() == b->name()->string_view()) {
          place_ = "value";
          item_ = std::max(hashes[i].second, hashes[j].second);
          return fail(ErrorCode::DuplicateName, "value '" + a->name()->str() + "' is named twice in this graph");
        }
      }
    }
    return {};
  }

  // The DTensor checks (verify_distributed.cc), with the place prefixed.
  Status check_dtensor(const fb::Value* value, const std::string& what) const {
    Status s = check_dtensor_spec(program_, *value, what, budget_);
    return s ? s : fail(s.error().code, s.error().message);
  }

  Result<const fb::Value*> value_at(int64_t index) const {
    if (index < 0 || index >= static_cast<int64_t>(num_values_)) {
      return fail(ErrorCode::ValueIndexOutOfRange,
                  "value index " + std::to_string(index) + " is out of range (" + std::to_string(num_values_) +
                      " values)");
    }
    return graph_.values()->Get(static_cast<uint32_t>(index));
  }

  // A reference names value `index`, which must exist, be of an accepted kind and (for uses) be
  // defined already; for definitions, not yet defined.
  template <typename... Kinds>
  Status reference(int64_t index, bool defining, const char* ref_kind, Kinds... kinds) {
    NRT_TRY(value, value_at(index));
    const fb::ValueKind kind = (*value)->kind();
    if (sizeof...(kinds) > 0 && ((kind != kinds) && ...)) {
      return fail(ErrorCode::TypeMismatch, std::string(ref_kind) + " names value '" + (*value)->name()->str() +
                                               "' of kind " + fb::EnumNameValueKind(kind));
    }
    const auto slot = static_cast<uint32_t>(index);
    if (defining) {
      if (defined_[slot]) {
        return fail(ErrorCode::ValueRedefined, "value '" + (*value)->name()->str() + "' is already defined");
      }
      defined_[slot] = true;
    } else if (!defined_[slot]) {
      return fail(ErrorCode::ValueUsedBeforeDefinition,
                  "value '" + (*value)->name()->str() + "' is used before it is defined");
    }
    return {};
  }

  Status tensor_ref(int64_t index, bool defining) {
    return reference(index, defining, "tensor reference", fb::ValueKind::TENSOR, fb::ValueKind::DTENSOR,
                     fb::ValueKind::OPTIONAL_TENSOR);
  }

  template <typename T>
  Status aligned(const flatbuffers::Vector<T>* v) const {
    if (elements_aligned(v)) return {};
    return fail(ErrorCode::FlatbufferInvalid, "a vector of " + std::to_string(sizeof(T)) +
                                                  "-byte elements is not " + std::to_string(alignof(T)) +
                                                  "-byte aligned");
  }

  Status check_enum_arg(bool ok, const char* name, int raw) const {
    if (ok) return {};
    return fail(ErrorCode::UnknownEnumValue, std::string(name) + " argument " + std::to_string(raw) + " is unknown");
  }

  // How many elements an argument's own vectors hold (what walking it costs).
  static uint64_t listed_elements(fb::Argument type, const void* arg) {
    using A = fb::Argument;
    switch (type) {
      case A::TensorListArg:
        return vector_size(static_cast<const fb::TensorListArg*>(arg)->values());
      case A::SymIntListArg:
        return vector_size(static_cast<const fb::SymIntListArg*>(arg)->items());
      case A::SymFloatListArg:
        return vector_size(static_cast<const fb::SymFloatListArg*>(arg)->items());
      case A::SymBoolListArg:
        return vector_size(static_cast<const fb::SymBoolListArg*>(arg)->items());
      case A::OptionalTensorListArg:
        return vector_size(static_cast<const fb::OptionalTensorListArg*>(arg)->values());
      case A::NestedTensorsArg:
        return vector_size(static_cast<const fb::NestedTensorsArg*>(arg)->lists());
      case A::IntListListArg:
        return vector_size(static_cast<const fb::IntListListArg*>(arg)->lists());
      case A::FloatListListArg:
        return vector_size(static_cast<const fb::FloatListListArg*>(arg)->lists());
      case A::StringToArgumentArg:
        return vector_size(static_cast<const fb::StringToArgumentArg*>(arg)->entries());
      default:
        return 0;
    }
  }

  // Walks an argument used as input; `depth` bounds nested maps.
  Status use(fb::Argument type, const void* arg, int depth = 0) {
    using A = fb::Argument;
    if (arg == nullptr && type != A::NONE) {
      return fail(ErrorCode::MissingField, "argument of kind " + std::string(fb::EnumNameArgument(type)) + " is empty");
    }
    NRT_RETURN_IF_ERROR(budget_.charge(1 + listed_elements(type, arg)));
    switch (type) {
      case A::NONE:
      case A::NoneArg:
      case A::IntArg:
      case A::FloatArg:
      case A::StringArg:
      case A::StringListArg:
      case A::BoolArg:
      case A::BoolListArg:
      case A::ComplexArg:
        return {};
      case A::IntListArg:
        return aligned(static_cast<const fb::IntListArg*>(arg)->values());
      case A::FloatListArg:
        return aligned(static_cast<const fb::FloatListArg*>(arg)->values());
      case A::IntListListArg: {
        const auto* lists = static_cast<const fb::IntListListArg*>(arg)->lists();
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          NRT_RETURN_IF_ERROR(aligned(lists->Get(i)->values()));
        }
        return {};
      }
      case A::FloatListListArg: {
        const auto* lists = static_cast<const fb::FloatListListArg*>(arg)->lists();
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          NRT_RETURN_IF_ERROR(aligned(lists->Get(i)->values()));
        }
        return {};
      }
      case A::TensorArg:
        return tensor_ref(static_cast<const fb::TensorArg*>(arg)->value(), false);
      case A::TensorListArg:
        return tensor_list(static_cast<const fb::TensorListArg*>(arg), false);
      case A::SymIntArg: {
        const auto* a = static_cast<const fb::SymIntArg*>(arg);
        return a->value() < 0 ? Status{} : reference(a->value(), false, "SymInt reference", fb::ValueKind::SYM_INT);
      }
      case A::SymIntListArg: {
        const auto* items = static_cast<const fb::SymIntListArg*>(arg)->items();
        NRT_RETURN_IF_ERROR(aligned(items));
        for (uint32_t i = 0; i < vector_size(items); ++i) {
          int32_t v = items->Get(i)->value();
          if (v >= 0) {
            NRT_RETURN_IF_ERROR(reference(v, false, "SymInt reference", fb::ValueKind::SYM_INT));
          }
        }
        return {};
      }
      case A::SymFloatArg: {
        const auto* a = static_cast<const fb::SymFloatArg*>(arg);
        return a->value() < 0 ? Status{}
                              : reference(a->value(), false, "SymFloat reference", fb::ValueKind::SYM_FLOAT);
      }
      case A::SymFloatListArg: {
        const auto* items = static_cast<const fb::SymFloatListArg*>(arg)->items();
        NRT_RETURN_IF_ERROR(aligned(items));
        for (uint32_t i = 0; i < vector_size(items); ++i) {
          int32_t v = items->Get(i)->value();
          if (v >= 0) {
            NRT_RETURN_IF_ERROR(reference(v, false, "SymFloat reference", fb::ValueKind::SYM_FLOAT));
          }
        }
        return {};
      }
      case A::SymBoolArg: {
        const auto* a = static_cast<const fb::SymBoolArg*>(arg);
        return a->value() < 0 ? Status{} : reference(a->value(), false, "SymBool reference", fb::ValueKind::SYM_BOOL);
      }
      case A::SymBoolListArg: {
        const auto* items = static_cast<const fb::SymBoolListArg*>(arg)->items();
        for (uint32_t i = 0; i < vector_size(items); ++i) {
          int32_t v = items->Get(i)->value();
          if (v >= 0) {
            NRT_RETURN_IF_ERROR(reference(v, false, "SymBool reference", fb::ValueKind::SYM_BOOL));
          }
        }
        return {};
      }
      case A::ScalarTypeArg: {
        auto v = static_cast<const fb::ScalarTypeArg*>(arg)->value();
        return check_enum_arg(known(v, fb::EnumNameScalarType), "ScalarType", static_cast<int>(v));
      }
      case A::MemoryFormatArg: {
        auto v = static_cast<const fb::MemoryFormatArg*>(arg)->value();
        return check_enum_arg(known(v, fb::EnumNameMemoryFormat), "MemoryFormat", static_cast<int>(v));
      }
      case A::LayoutArg: {
        auto v = static_cast<const fb::LayoutArg*>(arg)->value();
        return check_enum_arg(known(v, fb::EnumNameLayout), "Layout", static_cast<int>(v));
      }
      case A::DeviceArg: {
        const auto* device = static_cast<const fb::DeviceArg*>(arg)->value();
        if (device == nullptr) return {};
        return check_enum_arg(known(device->type(), fb::EnumNameDeviceType), "DeviceType",
                              static_cast<int>(device->type()));
      }
      case A::OptionalTensorListArg: {
        const auto* values = static_cast<const fb::OptionalTensorListArg*>(arg)->values();
        for (uint32_t i = 0; i < vector_size(values); ++i) {
          if (values->Get(i) >= 0) {
            NRT_RETURN_IF_ERROR(tensor_ref(values->Get(i), false));
          }
        }
        return {};
      }
      case A::OptionalTensorArg: {
        int32_t v = static_cast<const fb::OptionalTensorArg*>(arg)->value();
        return v < 0 ? Status{} : tensor_ref(v, false);
      }
      case A::GraphArg: {
        uint32_t g = static_cast<const fb::GraphArg*>(arg)->graph();
        if (g >= vector_size(program_.graphs())) {
          return fail(ErrorCode::GraphIndexOutOfRange,
                      "subgraph index " + std::to_string(g) + " of " + std::to_string(vector_size(program_.graphs())));
        }
        subgraphs_.push_back(g);
        return {};
      }
      case A::CustomObjArg:
        return reference(static_cast<const fb::CustomObjArg*>(arg)->value(), false, "custom object reference",
                         fb::ValueKind::CUSTOM_OBJ);
      case A::OperatorArg: {
        uint32_t op = static_cast<const fb::OperatorArg*>(arg)->op();
        if (op >= vector_size(program_.operators())) {
          return fail(ErrorCode::OperatorIndexOutOfRange,
                      "operator index " + std::to_string(op) + " of " + std::to_string(vector_size(program_.operators())));
        }
        return {};
      }
      case A::NestedTensorsArg: {
        const auto* lists = static_cast<const fb::NestedTensorsArg*>(arg)->lists();
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          NRT_RETURN_IF_ERROR(tensor_list(lists->Get(i), false));
        }
        return {};
      }
      case A::StringToArgumentArg: {
        if (depth >= 16) return fail(ErrorCode::GraphRecursion, "string-to-argument maps nest deeper than 16");
        const auto* entries = static_cast<const fb::StringToArgumentArg*>(arg)->entries();
        for (uint32_t i = 0; i < vector_size(entries); ++i) {
          const auto* entry = entries->Get(i);
          NRT_RETURN_IF_ERROR(use(entry->value_type(), entry->value(), depth + 1));
        }
        return {};
      }
      case A::ProcessGroupArg: {
        uint32_t g = static_cast<const fb::ProcessGroupArg*>(arg)->group();
        if (g >= vector_size(program_.process_groups())) {
          return fail(ErrorCode::GroupIndexOutOfRange, "process group index " + std::to_string(g) + " of " +
                                                           std::to_string(vector_size(program_.process_groups())));
        }
        return {};
      }
      case A::ValueArg:
        return reference(static_cast<const fb::ValueArg*>(arg)->value(), false, "value reference");
    }
    return fail(ErrorCode::UnknownArgumentKind,
                "argument union member " + std::to_string(static_cast<int>(type)) + " is unknown to this version");
  }

  Status tensor_list(const fb::TensorListArg* list, bool defining) {
    const auto* values = list ? list->values() : nullptr;
    NRT_RETURN_IF_ERROR(budget_.charge(vector_size(values)));
    for (uint32_t i = 0; i < vector_size(values); ++i) {
      NRT_RETURN_IF_ERROR(tensor_ref(values->Get(i), defining));
    }
    return {};
  }

  // An argument in a defining position (graph input, node output).
  Status define_from(fb::Argument type, const void* arg, bool allow_constant) {
    using A = fb::Argument;
    if (arg == nullptr && type != A::NONE) {
      return fail(ErrorCode::MissingField, "argument of kind " + std::string(fb::EnumNameArgument(type)) + " is empty");
    }
    switch (type) {
      case A::TensorArg:
        return tensor_ref(static_cast<const fb::TensorArg*>(arg)->value(), true);
      case A::TensorListArg:
        return tensor_list(static_cast<const fb::TensorListArg*>(arg), true);
      case A::OptionalTensorArg: {
        int32_t v = static_cast<const fb::OptionalTensorArg*>(arg)->value();
        return v < 0 ? Status{} : tensor_ref(v, true);
      }
      case A::SymIntArg: {
        const auto* a = static_cast<const fb::SymIntArg*>(arg);
        if (a->value() >= 0) return reference(a->value(), true, "SymInt reference", fb::ValueKind::SYM_INT);
        break;
      }
      case A::SymFloatArg: {
        const auto* a = static_cast<const fb::SymFloatArg*>(arg);
        if (a->value() >= 0) return reference(a->value(), true, "SymFloat reference", fb::ValueKind::SYM_FLOAT);
        break;
      }
      case A::SymBoolArg: {
        const auto* a = static_cast<const fb::SymBoolArg*>(arg);
        if (a->value() >= 0) return reference(a->value(), true, "SymBool reference", fb::ValueKind::SYM_BOOL);
        break;
      }
      case A::CustomObjArg:
        return reference(static_cast<const fb::CustomObjArg*>(arg)->value(), true, "custom object reference",
                         fb::ValueKind::CUSTOM_OBJ);
      case A::ValueArg:
        return reference(static_cast<const fb::ValueArg*>(arg)->value(), true, "value reference");
      case A::NoneArg:
        return {};
      case A::NONE:
        return fail(ErrorCode::MissingField, "slot holds no argument");
      default:
        break;
    }
    if (!allow_constant) {
      return fail(ErrorCode::InvalidOutputArgument,
                  std::string("a ") + fb::EnumNameArgument(type) + " defines no value and cannot be a node output");
    }
    return use(type, arg);
  }

  Status check_node(uint32_t n) {
    node_ = n;
    const auto* node = graph_.nodes()->Get(n);
    place_.clear();
    if (node->op() >= vector_size(program_.operators())) {
      return fail(ErrorCode::OperatorIndexOutOfRange, "operator index " + std::to_string(node->op()) + " of " +
                                                          std::to_string(vector_size(program_.operators())));
    }
    place_ = "argument";
    for (uint32_t i = 0; i < vector_size(node->inputs()); ++i) {
      item_ = i;
      const auto* named = node->inputs()->Get(i);
      if (!known(named->kind(), fb::EnumNameArgumentKind)) {
        return fail(ErrorCode::UnknownEnumValue, "argument kind " + std::to_string(static_cast<int>(named->kind())));
      }
      NRT_RETURN_IF_ERROR(use(named->arg_type(), named->arg()));
    }
    place_ = "result";
    for (uint32_t i = 0; i < vector_size(node->outputs()); ++i) {
      item_ = i;
      const auto* holder = node->outputs()->Get(i);
      NRT_RETURN_IF_ERROR(define_from(holder->arg_type(), holder->arg(), /*allow_constant=*/false));
    }
    place_.clear();
    node_ = -1;
    return {};
  }

  Status check_signature() {
    const auto* sig = graph_.signature();
    place_ = "signature";
    item_ = 0;
    if (sig == nullptr) {
      if (is_entry_point_) return fail(ErrorCode::SignatureMissing, "entry point has no signature");
      place_.clear();
      return {};
    }
    const uint32_t num_inputs = vector_size(graph_.inputs());
    if (vector_size(sig->inputs()) != num_inputs) {
      return fail(ErrorCode::SignatureInputMismatch, std::to_string(vector_size(sig->inputs())) + " input specs for " +
                                                         std::to_string(num_inputs) + " graph inputs");
    }
    for (uint32_t i = 0; i < num_inputs; ++i) {
      item_ = i;
      const auto* spec = sig->inputs()->Get(i);
      const auto* holder = graph_.inputs()->Get(i);
      if (!known(spec->kind(), fb::EnumNameInputKind) || spec->kind() == fb::InputKind::UNKNOWN) {
        return fail(ErrorCode::UnknownEnumValue, "input spec kind " + std::to_string(static_cast<int>(spec->kind())));
      }
      const int64_t bound = single_value_of(holder->arg_type(), holder->arg());
      if (spec->value() != bound) {
        return fail(ErrorCode::SignatureInputMismatch, "input spec names value " + std::to_string(spec->value()) +
                                                           " but graph input " + std::to_string(i) + " is value " +
                                                           std::to_string(bound));
      }
      const bool needs_target = spec->kind() == fb::InputKind::PARAMETER || spec->kind() == fb::InputKind::BUFFER ||
                                spec->kind() == fb::InputKind::TENSOR_CONSTANT;
      if (needs_target && (spec->target() == nullptr || spec->target()->size() == 0)) {
        return fail(ErrorCode::SignatureInputMismatch,
                    std::string(fb::EnumNameInputKind(spec->kind())) + " input spec has no target name");
      }
      // Only a CONSTANT_INPUT spec carries a constant (NoneArg for a None), and it always does;
      // only a BUFFER spec may be non-persistent. A PARAMETER / BUFFER / TENSOR_CONSTANT target need
      // not name a weight of this file: a program may come without weights (a bare torch.export
      // JSON), and the executor reports a missing one when it binds weights (NRT-E1005).
      const bool is_constant = spec->kind() == fb::InputKind::CONSTANT_INPUT;
      const bool has_constant = spec->constant() != nullptr && spec->constant()->arg_type() != fb::Argument::NONE;
      if (is_constant && !has_constant) {
        return fail(ErrorCode::SignatureInputMismatch, "CONSTANT_INPUT input spec has no constant");
      }
      if (!is_constant && spec->constant() != nullptr) {
        return fail(ErrorCode::SignatureInputMismatch, std::string(fb::EnumNameInputKind(spec->kind())) +
                                                           " input spec carries a constant, which only CONSTANT_INPUT "
                                                           "specs have");
      }
      if (spec->kind() != fb::InputKind::BUFFER && !spec->persistent()) {
        return fail(ErrorCode::SignatureInputMismatch, std::string(fb::EnumNameInputKind(spec->kind())) +
                                                           " input spec is marked non-persistent, which only BUFFER "
                                                           "specs can be");
      }
      if (has_constant) {
        NRT_RETURN_IF_ERROR(use(spec->constant()->arg_type(), spec->constant()->arg()));
      }
    }
    const uint32_t num_outputs = vector_size(graph_.outputs());
    if (vector_size(sig->outputs()) != num_outputs) {
      return fail(ErrorCode::SignatureOutputMismatch, std::to_string(vector_size(sig->outputs())) + " output specs for " +
                                                          std::to_string(num_outputs) + " graph outputs");
    }
    for (uint32_t i = 0; i < num_outputs; ++i) {
      item_ = i;
      const auto* spec = sig->outputs()->Get(i);
      const auto* holder = graph_.outputs()->Get(i);
      if (!known(spec->kind(), fb::EnumNameOutputKind) || spec->kind() == fb::OutputKind::UNKNOWN) {
        return fail(ErrorCode::UnknownEnumValue, "output spec kind " + std::to_string(static_cast<int>(spec->kind())));
      }
      const int64_t bound = single_value_of(holder->arg_type(), holder->arg());
      if (spec->value() != bound) {
        return fail(ErrorCode::SignatureOutputMismatch, "output spec names value " + std::to_string(spec->value()) +
                                                            " but graph output " + std::to_string(i) + " is value " +
                                                            std::to_string(bound));
      }
      const bool needs_target = spec->kind() != fb::OutputKind::USER_OUTPUT &&
                                spec->kind() != fb::OutputKind::LOSS_OUTPUT && spec->kind() != fb::OutputKind::TOKEN;
      if (needs_target && (spec->target() == nullptr || spec->target()->size() == 0)) {
        return fail(ErrorCode::SignatureOutputMismatch,
                    std::string(fb::EnumNameOutputKind(spec->kind())) + " output spec has no target name");
      }
    }
    place_.clear();
    return {};
  }

 public:
  std::vector<uint32_t> subgraphs_;  // graphs referenced by GraphArg, for the recursion check

 private:
  WorkBudget& budget_;
  const fb::Program& program_;
  const fb::Graph& graph_;
  [[maybe_unused]] uint32_t graph_index_;
  bool is_entry_point_;
  uint32_t num_values_;
  std::vector<bool> defined_;
  int64_t node_ = -1;
  std::string place_;
  uint32_t item_ = 0;
};

}  // namespace

Result<std::vector<uint32_t>> check_graph(const fb::Program& program, uint32_t graph_index, bool is_entry_point,
                                          WorkBudget& budget) {
  GraphChecker checker(program, graph_index, is_entry_point, budget);
  NRT_RETURN_IF_ERROR(checker.run());
  return std::move(checker.subgraphs_);
}

}  // namespace nrt::verify
