#include "serializer/verify_program.h"

#include <algorithm>
#include <string>
#include <unordered_set>
#include <vector>

#include "serializer/argument_values.h"
#include "serializer/checksum.h"
#include "serializer/input_limits.h"
#include "serializer/scalar_type_info.h"
#include "serializer/schema_access.h"

namespace nrt {
namespace {

// The FlatBuffers verifier checks bounds but not enum values: a known value has a non-empty name.
template <typename Enum>
bool known(Enum value, const char* (*name_of)(Enum)) {
  const char* name = name_of(value);
  return name != nullptr && name[0] != '\0';
}

std::string quoted(const flatbuffers::String* s) { return s ? "'" + s->str() + "'" : "''"; }

// The FlatBuffers verifier checks a vector's length field (4-byte alignment) but not that 8-byte
// elements are 8-byte aligned; reading a misaligned int64/double is undefined behaviour.
template <typename T>
bool elements_aligned(const flatbuffers::Vector<T>* v) {
  return v == nullptr || reinterpret_cast<uintptr_t>(v->Data()) % alignof(T) == 0;
}

// FlatBuffers' table budget bounds how often shared tables are walked, but a crafted file can
// also share one scalar vector (a mesh's ranks, a list of references) among many tables and make
// a walk quadratic in the file size. Every element the checks walk is charged here; a legitimate
// file walks each element a few times, so the budget is a small multiple of the file size.
class WorkBudget {
 public:
  explicit WorkBudget(uint64_t elements) : left_(elements) {}
  Status charge(uint64_t elements) {
    if (elements <= left_) {
      left_ -= elements;
      return {};
    }
    left_ = 0;
    return make_error(ErrorCode::FlatbufferInvalid,
                      "verification work budget exhausted: vectors are shared among so many tables that checking "
                      "them would take time quadratic in the file size");
  }

 private:
  uint64_t left_;
};

// What is wrong with a size or storage offset, or "" when nothing is. It is a non-negative
// literal, or a symbolic expression whose example value, when recorded, is non-negative. The
// expression is never empty: readers that test for one (`expr.empty()`) would take the dim for its
// literal, which nothing checked.
std::string extent_problem(const fb::SymDim* dim) {
  if (dim->expr() == nullptr) return dim->literal() < 0 ? "is negative (" + std::to_string(dim->literal()) + ")" : "";
  if (dim->expr()->size() == 0) return "has an empty symbolic expression";
  if (dim->hint() && *dim->hint() < 0) return "has a negative hint (" + std::to_string(*dim->hint()) + ")";
  return "";
}

// The checks every TensorMeta gets, a graph value's or a weight's: enums known, as many strides as
// sizes, extents valid. `what_of()` names the owner; it is only called to build an error message,
// which carries no place prefix (callers add theirs).
template <typename WhatOf>
Status check_tensor_meta(const fb::TensorMeta* meta, WorkBudget& budget, WhatOf&& what_of) {
  auto what = [&] { return std::string(what_of()); };
  if (meta == nullptr) return make_error(ErrorCode::MissingTypeInfo, what() + " has no tensor metadata");
  if (Status s = budget.charge(1 + vector_size(meta->sizes())); !s) return s;
  if (!known(meta->dtype(), fb::EnumNameScalarType)) {
    return make_error(
        ErrorCode::UnknownEnumValue,
        what() + " dtype " + std::to_string(static_cast<int>(meta->dtype())) + " is not a known ScalarType");
  }
  if (!known(meta->layout(), fb::EnumNameLayout)) {
    return make_error(
        ErrorCode::UnknownEnumValue,
        what() + " layout " + std::to_string(static_cast<int>(meta->layout())) + " is not a known Layout");
  }
  if (meta->device() && !known(meta->device()->type(), fb::EnumNameDeviceType)) {
    return make_error(ErrorCode::UnknownEnumValue, what() + " device type " +
                                                       std::to_string(static_cast<int>(meta->device()->type())) +
                                                       " is not a known DeviceType");
  }
  if (meta->strides() && vector_size(meta->strides()) != vector_size(meta->sizes())) {
    return make_error(ErrorCode::InvalidShape, what() + " has " + std::to_string(vector_size(meta->sizes())) +
                                                   " sizes but " + std::to_string(vector_size(meta->strides())) + " strides");
  }
  for (uint32_t d = 0; d < vector_size(meta->sizes()); ++d) {
    if (std::string problem = extent_problem(meta->sizes()->Get(d)); !problem.empty()) {
      return make_error(ErrorCode::InvalidShape, what() + " size " + std::to_string(d) + " " + problem);
    }
  }
  if (meta->storage_offset()) {
    if (std::string problem = extent_problem(meta->storage_offset()); !problem.empty()) {
      return make_error(ErrorCode::InvalidShape, what() + " storage offset " + problem);
    }
  }
  // Literal sizes whose bytes no process could address: such a value can never be computed, and
  // a tool that believed it would try to allocate it. (Symbolic sizes are bounded at run time.)
  uint64_t bytes = std::max<uint64_t>(element_size(meta->dtype()), 1);
  for (uint32_t d = 0; d < vector_size(meta->sizes()); ++d) {
    const auto* dim = meta->sizes()->Get(d);
    if (dim->expr() != nullptr && dim->expr()->size() > 0) continue;
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim->literal()), &bytes) || bytes > kMaxAddressableBytes) {
      return make_error(ErrorCode::InvalidShape, what() + " sizes need more than " +
                                                     std::to_string(kMaxAddressableBytes) +
                                                     " bytes, more than any process can address");
    }
  }
  return {};
}

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
    if (Status s = check_values(); !s) return s;
    place_ = "input";
    for (uint32_t i = 0; i < vector_size(graph_.inputs()); ++i) {
      item_ = i;
      const auto* holder = graph_.inputs()->Get(i);
      if (Status s = define_from(holder->arg_type(), holder->arg(), /*allow_constant=*/true); !s) return s;
    }
    for (uint32_t n = 0; n < vector_size(graph_.nodes()); ++n) {
      if (Status s = check_node(n); !s) return s;
    }
    place_ = "output";
    node_ = -1;
    for (uint32_t i = 0; i < vector_size(graph_.outputs()); ++i) {
      item_ = i;
      const auto* holder = graph_.outputs()->Get(i);
      if (Status s = use(holder->arg_type(), holder->arg()); !s) return s;
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
    if (Status s = check_unique_value_names(); !s) return s;
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
        if (Status s = check_meta(value->tensor(), what); !s) return s;
      }
      for (uint32_t e = 0; e < vector_size(value->elements()); ++e) {
        auto element = [&] { return what() + " element " + std::to_string(e); };
        if (Status s = check_meta(value->elements()->Get(e), element); !s) return s;
      }
      if (kind == fb::ValueKind::DTENSOR) {
        if (Status s = check_dtensor(value, what()); !s) return s;
      }
      if (Status s = check_foreign_references(value, what); !s) return s;
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

  Status check_dtensor(const fb::Value* value, const std::string& what) const {
    const auto* spec = value->dtensor();
    if (spec == nullptr) return fail(ErrorCode::MissingTypeInfo, what + " is a DTensor without a DTensorSpec");
    if (spec->mesh() >= vector_size(program_.meshes())) {
      return fail(ErrorCode::MeshIndexOutOfRange, what + " names mesh " + std::to_string(spec->mesh()) + " of " +
                                                      std::to_string(vector_size(program_.meshes())));
    }
    const auto* mesh = program_.meshes()->Get(spec->mesh());
    const uint32_t mesh_dims = vector_size(mesh->shape());
    if (Status s = budget_.charge(1 + vector_size(spec->placements())); !s) return s;
    if (vector_size(spec->placements()) != mesh_dims) {
      return fail(ErrorCode::InvalidPlacement, what + " has " + std::to_string(vector_size(spec->placements())) +
                                                   " placements for a " + std::to_string(mesh_dims) + "-D mesh");
    }
    // The global shape, when recorded, has the local shard's rank; its strides, when recorded, one
    // per global size.
    const uint32_t rank = vector_size(value->tensor()->sizes());
    const uint32_t global_rank = vector_size(spec->global_sizes());
    if (Status s = budget_.charge(global_rank + vector_size(spec->global_strides())); !s) return s;
    if (spec->global_sizes() && global_rank != rank) {
      return fail(ErrorCode::InvalidShape, what + " has " + std::to_string(global_rank) +
                                               " global sizes for a local tensor of rank " + std::to_string(rank));
    }
    for (uint32_t d = 0; d < global_rank; ++d) {
      if (std::string problem = extent_problem(spec->global_sizes()->Get(d)); !problem.empty()) {
        return fail(ErrorCode::InvalidShape, what + " global size " + std::to_string(d) + " " + problem);
      }
    }
    if (spec->global_strides() && vector_size(spec->global_strides()) != global_rank) {
      return fail(ErrorCode::InvalidShape, what + " has " + std::to_string(global_rank) + " global sizes but " +
                                               std::to_string(vector_size(spec->global_strides())) + " global strides");
    }
    for (uint32_t p = 0; p < mesh_dims; ++p) {
      const auto* placement = spec->placements()->Get(p);
      const std::string at = what + " placement " + std::to_string(p) + ": ";
      const fb::PlacementKind kind = placement->kind();
      switch (kind) {
        case fb::PlacementKind::REPLICATE:
          break;
        case fb::PlacementKind::STRIDED_SHARD:
          if (placement->split_factor() < 1) {
            return fail(ErrorCode::InvalidPlacement, at + "split factor " + std::to_string(placement->split_factor()) +
                                                         " must be at least 1");
          }
          [[fallthrough]];
        case fb::PlacementKind::SHARD:
          if (placement->dim() < 0 || static_cast<uint32_t>(placement->dim()) >= rank) {
            return fail(ErrorCode::InvalidPlacement, at + "shard dim " + std::to_string(placement->dim()) +
                                                         " is outside a tensor of rank " + std::to_string(rank));
          }
          break;
        case fb::PlacementKind::PARTIAL:
          if (!known(placement->reduce_op(), fb::EnumNameReduceOp)) {
            return fail(ErrorCode::UnknownEnumValue,
                        at + "reduce op " + std::to_string(static_cast<int>(placement->reduce_op())) + " is unknown");
          }
          break;
        default:
          return fail(ErrorCode::UnknownEnumValue,
                      at + "kind " + std::to_string(static_cast<int>(kind)) + " is unknown");
      }
      // A struct has no absent fields: a field its kind does not use holds its zero value (SUM for
      // the reduce op), so a placement reads one way only. A non-PARTIAL placement whose reduce op
      // is SUM is indistinguishable from one without, and is accepted.
      auto unused = [&](const char* field, int64_t held, const char* owners) {
        return fail(ErrorCode::InvalidPlacement, at + fb::EnumNamePlacementKind(kind) + " placement carries " + field +
                                                     " " + std::to_string(held) + ", which only " + owners +
                                                     " placements use");
      };
      const bool sharded = kind == fb::PlacementKind::SHARD || kind == fb::PlacementKind::STRIDED_SHARD;
      if (kind != fb::PlacementKind::PARTIAL && placement->reduce_op() != fb::ReduceOp::SUM) {
        return unused("reduce op", static_cast<int>(placement->reduce_op()), "PARTIAL");
      }
      if (!sharded && placement->dim() != 0) return unused("dim", placement->dim(), "SHARD and STRIDED_SHARD");
      if (kind != fb::PlacementKind::STRIDED_SHARD && placement->split_factor() != 0) {
        return unused("split factor", placement->split_factor(), "STRIDED_SHARD");
      }
    }
    return {};
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
    auto value = value_at(index);
    if (!value) return value.error();
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
    if (Status s = budget_.charge(1 + listed_elements(type, arg)); !s) return s;
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
          if (Status s = aligned(lists->Get(i)->values()); !s) return s;
        }
        return {};
      }
      case A::FloatListListArg: {
        const auto* lists = static_cast<const fb::FloatListListArg*>(arg)->lists();
        for (uint32_t i = 0; i < vector_size(lists); ++i) {
          if (Status s = aligned(lists->Get(i)->values()); !s) return s;
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
        if (Status s = aligned(items); !s) return s;
        for (uint32_t i = 0; i < vector_size(items); ++i) {
          int32_t v = items->Get(i)->value();
          if (v >= 0) {
            if (Status s = reference(v, false, "SymInt reference", fb::ValueKind::SYM_INT); !s) return s;
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
        if (Status s = aligned(items); !s) return s;
        for (uint32_t i = 0; i < vector_size(items); ++i) {
          int32_t v = items->Get(i)->value();
          if (v >= 0) {
            if (Status s = reference(v, false, "SymFloat reference", fb::ValueKind::SYM_FLOAT); !s) return s;
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
            if (Status s = reference(v, false, "SymBool reference", fb::ValueKind::SYM_BOOL); !s) return s;
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
            if (Status s = tensor_ref(values->Get(i), false); !s) return s;
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
          if (Status s = tensor_list(lists->Get(i), false); !s) return s;
        }
        return {};
      }
      case A::StringToArgumentArg: {
        if (depth >= 16) return fail(ErrorCode::GraphRecursion, "string-to-argument maps nest deeper than 16");
        const auto* entries = static_cast<const fb::StringToArgumentArg*>(arg)->entries();
        for (uint32_t i = 0; i < vector_size(entries); ++i) {
          const auto* entry = entries->Get(i);
          if (Status s = use(entry->value_type(), entry->value(), depth + 1); !s) return s;
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
    if (Status s = budget_.charge(vector_size(values)); !s) return s;
    for (uint32_t i = 0; i < vector_size(values); ++i) {
      if (Status s = tensor_ref(values->Get(i), defining); !s) return s;
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
      if (Status s = use(named->arg_type(), named->arg()); !s) return s;
    }
    place_ = "result";
    for (uint32_t i = 0; i < vector_size(node->outputs()); ++i) {
      item_ = i;
      const auto* holder = node->outputs()->Get(i);
      if (Status s = define_from(holder->arg_type(), holder->arg(), /*allow_constant=*/false); !s) return s;
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
        if (Status s = use(spec->constant()->arg_type(), spec->constant()->arg()); !s) return s;
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

Status check_meshes(const fb::Program& program, WorkBudget& budget) {
  for (uint32_t m = 0; m < vector_size(program.meshes()); ++m) {
    const auto* mesh = program.meshes()->Get(m);
    if (Status s = budget.charge(1 + vector_size(mesh->shape()) + vector_size(mesh->dim_names()) + vector_size(mesh->ranks())); !s) {
      return s;
    }
    const std::string at = "mesh " + std::to_string(m) + " " + quoted(mesh->name()) + ": ";
    if (!known(mesh->device_type(), fb::EnumNameDeviceType)) {
      return make_error(ErrorCode::UnknownEnumValue, at + "device type " +
                                                         std::to_string(static_cast<int>(mesh->device_type())));
    }
    if (!elements_aligned(mesh->shape())) {
      return make_error(ErrorCode::FlatbufferInvalid, at + "its shape vector is not 8-byte aligned");
    }
    if (vector_size(mesh->shape()) == 0) return make_error(ErrorCode::InvalidMesh, at + "shape is empty");
    uint64_t product = 1;
    for (uint32_t d = 0; d < vector_size(mesh->shape()); ++d) {
      const int64_t extent = mesh->shape()->Get(d);
      if (extent <= 0 || __builtin_mul_overflow(product, static_cast<uint64_t>(extent), &product)) {
        return make_error(ErrorCode::InvalidMesh, at + "dimension " + std::to_string(d) + " has extent " +
                                                      std::to_string(extent));
      }
    }
    if (product != vector_size(mesh->ranks())) {
      return make_error(ErrorCode::InvalidMesh, at + "shape holds " + std::to_string(product) + " ranks but " +
                                                    std::to_string(vector_size(mesh->ranks())) + " are listed");
    }
    if (vector_size(mesh->dim_names()) != 0 && vector_size(mesh->dim_names()) != vector_size(mesh->shape())) {
      return make_error(ErrorCode::InvalidMesh, at + std::to_string(vector_size(mesh->dim_names())) + " dim names for " +
                                                    std::to_string(vector_size(mesh->shape())) + " dimensions");
    }
    std::unordered_set<int32_t> seen;
    for (uint32_t r = 0; r < vector_size(mesh->ranks()); ++r) {
      const int32_t rank = mesh->ranks()->Get(r);
      if (rank < 0 || !seen.insert(rank).second) {
        return make_error(ErrorCode::InvalidMesh, at + "rank " + std::to_string(rank) + " at position " +
                                                      std::to_string(r) + " is negative or repeated");
      }
    }
  }
  return {};
}

Status check_process_groups(const fb::Program& program, WorkBudget& budget) {
  std::unordered_set<std::string_view> names;
  for (uint32_t g = 0; g < vector_size(program.process_groups()); ++g) {
    const auto* group = program.process_groups()->Get(g);
    if (Status s = budget.charge(1 + vector_size(group->ranks())); !s) return s;
    const std::string at = "process group " + std::to_string(g) + " '" + group->name()->str() + "': ";
    if (!names.insert(group->name()->string_view()).second) {
      return make_error(ErrorCode::DuplicateName, at + "name is used by an earlier group");
    }
    // No ranks means "bound by name at load time" (a torch collective's group_name without a
    // size); a group derived from a mesh must list them.
    if (vector_size(group->ranks()) == 0 && group->mesh() >= 0) {
      return make_error(ErrorCode::InvalidProcessGroup, at + "is derived from a mesh but lists no ranks");
    }
    std::unordered_set<int32_t> seen;
    for (uint32_t r = 0; r < vector_size(group->ranks()); ++r) {
      const int32_t rank = group->ranks()->Get(r);
      if (rank < 0 || !seen.insert(rank).second) {
        return make_error(ErrorCode::InvalidProcessGroup,
                          at + "rank " + std::to_string(rank) + " at position " + std::to_string(r) +
                              " is negative or repeated");
      }
    }
    if (group->mesh() < 0) {
      if (group->mesh_dim() >= 0) {
        return make_error(ErrorCode::InvalidProcessGroup, at + "has a mesh dimension but no mesh");
      }
      continue;
    }
    if (static_cast<uint32_t>(group->mesh()) >= vector_size(program.meshes())) {
      return make_error(ErrorCode::MeshIndexOutOfRange, at + "names mesh " + std::to_string(group->mesh()) + " of " +
                                                            std::to_string(vector_size(program.meshes())));
    }
    const auto* mesh = program.meshes()->Get(static_cast<uint32_t>(group->mesh()));
    if (group->mesh_dim() < 0 || static_cast<uint32_t>(group->mesh_dim()) >= vector_size(mesh->shape())) {
      return make_error(ErrorCode::InvalidProcessGroup, at + "mesh dimension " + std::to_string(group->mesh_dim()) +
                                                            " is outside a " + std::to_string(vector_size(mesh->shape())) +
                                                            "-D mesh");
    }
    if (static_cast<int64_t>(vector_size(group->ranks())) != mesh->shape()->Get(static_cast<uint32_t>(group->mesh_dim()))) {
      return make_error(ErrorCode::InvalidProcessGroup,
                        at + std::to_string(vector_size(group->ranks())) + " ranks for a mesh dimension of extent " +
                            std::to_string(mesh->shape()->Get(static_cast<uint32_t>(group->mesh_dim()))));
    }
    if (Status s = budget.charge(vector_size(mesh->ranks())); !s) return s;
    std::unordered_set<int32_t> mesh_ranks(mesh->ranks()->begin(), mesh->ranks()->end());
    for (int32_t rank : *group->ranks()) {
      if (!mesh_ranks.count(rank)) {
        return make_error(ErrorCode::InvalidProcessGroup, at + "rank " + std::to_string(rank) + " is not in its mesh");
      }
    }
  }
  return {};
}

Status check_storages(const fb::Program& program, std::span<const uint8_t> segment, bool deep) {
  for (uint32_t s = 0; s < vector_size(program.storages()); ++s) {
    const auto* storage = program.storages()->Get(s);
    const std::string at = "storage " + std::to_string(s) + ": ";
    if (storage->inline_data() != nullptr) {
      return make_error(ErrorCode::InlineDataMismatch,
                        at + "carries inline data, which only the .nrt.json form may hold");
    }
    const uint32_t alignment = storage->alignment();
    if (alignment > kMaxStorageAlignment) {
      return make_error(ErrorCode::StorageMisaligned, at + "alignment " + std::to_string(alignment) +
                                                          " exceeds the limit of " +
                                                          std::to_string(kMaxStorageAlignment));
    }
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || storage->offset() % alignment != 0) {
      return make_error(ErrorCode::StorageMisaligned, at + "offset " + std::to_string(storage->offset()) +
                                                          " is not a multiple of its alignment " +
                                                          std::to_string(alignment));
    }
    uint64_t end = 0;
    if (__builtin_add_overflow(storage->offset(), storage->size(), &end) || end > segment.size()) {
      return make_error(ErrorCode::StorageOutOfSegment,
                        at + "bytes [" + std::to_string(storage->offset()) + ", +" + std::to_string(storage->size()) +
                            ") lie outside the weight segment of " + std::to_string(segment.size()) + " bytes");
    }
    if (deep) {
      const auto got = checksum_of(segment.subspan(storage->offset(), storage->size()));
      const auto* want = storage->checksum();
      if (want == nullptr || got.low() != want->low() || got.high() != want->high()) {
        return make_error(ErrorCode::ChecksumMismatch, at + "XXH3-128 of its " + std::to_string(storage->size()) +
                                                           " bytes does not match the recorded checksum");
      }
    }
  }
  return {};
}

// Bytes a strided view needs from its storage: (offset + sum((size-1)*stride) + 1) * element size.
Status check_weight_view(const fb::Program& program, uint32_t w) {
  const auto* weight = program.weights()->Get(w);
  const std::string at = "weight " + std::to_string(w) + " '" + weight->fqn()->str() + "': ";
  if (weight->storage() >= vector_size(program.storages())) {
    return make_error(ErrorCode::StorageIndexOutOfRange, at + "names storage " + std::to_string(weight->storage()) +
                                                             " of " + std::to_string(vector_size(program.storages())));
  }
  const auto* meta = weight->meta();
  const size_t elem = element_size(meta->dtype());
  if (elem == 0) {
    return make_error(ErrorCode::UnknownEnumValue,
                      at + "dtype " + std::to_string(static_cast<int>(meta->dtype())) + " has no known element size");
  }
  const uint32_t rank = vector_size(meta->sizes());
  if (vector_size(meta->strides()) != rank) {
    return make_error(ErrorCode::InvalidShape, at + std::to_string(rank) + " sizes but " +
                                                   std::to_string(vector_size(meta->strides())) + " strides");
  }
  auto literal = [](const fb::SymDim* dim, int64_t* out) {
    if (dim == nullptr) {
      *out = 0;
      return true;
    }
    *out = dim->literal();
    return dim->expr() == nullptr;
  };
  int64_t offset = 0;
  if (!literal(meta->storage_offset(), &offset) || offset < 0) {
    return make_error(ErrorCode::InvalidShape, at + "storage offset must be a non-negative literal");
  }
  uint64_t last = static_cast<uint64_t>(offset);
  bool empty = false;
  for (uint32_t d = 0; d < rank; ++d) {
    int64_t size = 0, stride = 0;
    if (!literal(meta->sizes()->Get(d), &size) || !literal(meta->strides()->Get(d), &stride) || size < 0 ||
        stride < 0) {
      return make_error(ErrorCode::InvalidShape,
                        at + "dimension " + std::to_string(d) + " needs a non-negative literal size and stride");
    }
    if (size == 0) empty = true;
    uint64_t reach = 0;
    if (size > 0 && (__builtin_mul_overflow(static_cast<uint64_t>(size - 1), static_cast<uint64_t>(stride), &reach) ||
                     __builtin_add_overflow(last, reach, &last))) {
      return make_error(ErrorCode::InvalidShape, at + "extent overflows 64 bits at dimension " + std::to_string(d));
    }
  }
  if (empty) return {};
  uint64_t bytes = 0;
  if (__builtin_add_overflow(last, uint64_t{1}, &bytes) || __builtin_mul_overflow(bytes, elem, &bytes) ||
      bytes > program.storages()->Get(weight->storage())->size()) {
    return make_error(ErrorCode::TensorViewOutOfStorage,
                      at + "view needs " + std::to_string(bytes) + " bytes but storage " +
                          std::to_string(weight->storage()) + " holds " +
                          std::to_string(program.storages()->Get(weight->storage())->size()));
  }
  return {};
}

Status check_weights(const fb::Program& program, WorkBudget& budget) {
  std::unordered_set<std::string_view> names;
  for (uint32_t w = 0; w < vector_size(program.weights()); ++w) {
    const auto* weight = program.weights()->Get(w);
    auto what = [&] { return "weight " + std::to_string(w) + " '" + weight->fqn()->str() + "'"; };
    if (!names.insert(weight->fqn()->string_view()).second) {
      return make_error(ErrorCode::DuplicateName, what() + " has the same name as an earlier weight");
    }
    // The checks a graph value's metadata gets (enums, ranks, extents); the view check below adds
    // what a weight needs beyond them.
    if (Status s = check_tensor_meta(weight->meta(), budget, what); !s) return s;
    if (Status s = check_weight_view(program, w); !s) return s;
  }
  return {};
}

// Subgraph references must form a DAG (a graph may not call itself, directly or not).
Status check_graph_recursion(const std::vector<std::vector<uint32_t>>& calls) {
  enum : uint8_t { kNew, kOpen, kDone };
  std::vector<uint8_t> state(calls.size(), kNew);
  for (uint32_t root = 0; root < calls.size(); ++root) {
    if (state[root] != kNew) continue;
    std::vector<std::pair<uint32_t, size_t>> stack{{root, 0}};
    state[root] = kOpen;
    while (!stack.empty()) {
      auto& [g, next] = stack.back();
      if (next == calls[g].size()) {
        state[g] = kDone;
        stack.pop_back();
        continue;
      }
      const uint32_t callee = calls[g][next++];
      if (state[callee] == kOpen) {
        return make_error(ErrorCode::GraphRecursion,
                          "graph " + std::to_string(g) + " reaches graph " + std::to_string(callee) +
                              " which is already on the call path (recursive subgraphs)");
      }
      if (state[callee] == kNew) {
        state[callee] = kOpen;
        stack.emplace_back(callee, 0);
      }
    }
  }
  return {};
}

}  // namespace

Status verify_program(const fb::Program& program, uint64_t flatbuffer_size, std::span<const uint8_t> segment,
                      const VerifyOptions& options) {
  WorkBudget budget(16 * flatbuffer_size + (uint64_t{1} << 20));
  const auto* version = program.schema_version();
  if (version == nullptr) return make_error(ErrorCode::MissingField, "program has no schema_version");
  if (version->major() != kSchemaMajor) {
    return make_error(ErrorCode::UnsupportedSchemaVersion,
                      "schema version " + std::to_string(version->major()) + "." + std::to_string(version->minor()) +
                          "; this build reads major version " + std::to_string(kSchemaMajor));
  }
  const uint32_t num_graphs = vector_size(program.graphs());
  if (vector_size(program.entry_points()) == 0) return make_error(ErrorCode::NoEntryPoint, "program lists no entry point");
  std::vector<bool> is_entry(num_graphs, false);
  for (uint32_t e = 0; e < vector_size(program.entry_points()); ++e) {
    const uint32_t g = program.entry_points()->Get(e);
    if (g >= num_graphs) {
      return make_error(ErrorCode::GraphIndexOutOfRange, "entry point " + std::to_string(e) + " names graph " +
                                                             std::to_string(g) + " of " + std::to_string(num_graphs));
    }
    if (is_entry[g]) {
      return make_error(ErrorCode::DuplicateName, "graph " + std::to_string(g) + " is listed twice as entry point");
    }
    is_entry[g] = true;
  }
  std::unordered_set<std::string_view> graph_names;
  for (uint32_t g = 0; g < num_graphs; ++g) {
    if (!graph_names.insert(program.graphs()->Get(g)->name()->string_view()).second) {
      return make_error(ErrorCode::DuplicateName,
                        "graph " + std::to_string(g) + " '" + program.graphs()->Get(g)->name()->str() +
                            "' has the same name as an earlier graph");
    }
  }
  if (Status s = budget.charge(vector_size(program.entry_points())); !s) return s;
  if (Status s = check_meshes(program, budget); !s) return s;
  if (Status s = check_process_groups(program, budget); !s) return s;
  if (Status s = check_storages(program, segment, options.deep); !s) return s;
  if (Status s = check_weights(program, budget); !s) return s;
  std::vector<std::vector<uint32_t>> calls(num_graphs);
  for (uint32_t g = 0; g < num_graphs; ++g) {
    GraphChecker checker(program, g, is_entry[g], budget);
    if (Status s = checker.run(); !s) return s;
    calls[g] = std::move(checker.subgraphs_);
  }
  return check_graph_recursion(calls);
}

}  // namespace nrt
