// The pieces of verify_program (serializer/verify_program.h) shared by its files: the work
// budget, the checks every TensorMeta gets, and one entry per concern — a graph
// (verify_graph.cc), meshes, process groups and DTensor specs (verify_distributed.cc), storages
// and weights (verify_weights.cc). Internal to the serializer library.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "schema/nrt_generated.h"
#include "core/error.h"
#include "serializer/input_limits.h"
#include "core/schema_enums.h"
#include "serializer/schema_access.h"

namespace nrt::verify {

// The FlatBuffers verifier checks bounds but not enum values: a known value has a non-empty name.
template <typename Enum>
bool known(Enum value, const char* (*name_of)(Enum)) {
  const char* name = name_of(value);
  return name != nullptr && name[0] != '\0';
}

inline std::string quoted(const flatbuffers::String* s) { return s ? "'" + s->str() + "'" : "''"; }

// The FlatBuffers verifier checks a vector's length field (4-byte alignment) but not that 8-byte
// elements are 8-byte aligned; reading a misaligned int64/double is undefined behaviour.
template <typename T>
inline bool elements_aligned(const flatbuffers::Vector<T>* v) {
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
inline std::string extent_problem(const fb::SymDim* dim) {
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
  NRT_RETURN_IF_ERROR(budget.charge(1 + vector_size(meta->sizes())));
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

// Graph `graph_index`; returns the graphs its GraphArgs reference (for the recursion check).
Result<std::vector<uint32_t>> check_graph(const fb::Program& program, uint32_t graph_index, bool is_entry_point,
                                          WorkBudget& budget);

Status check_meshes(const fb::Program& program, WorkBudget& budget);
Status check_process_groups(const fb::Program& program, WorkBudget& budget);
// A DTENSOR value's spec against its mesh and tensor; messages name `what` and no place.
Status check_dtensor_spec(const fb::Program& program, const fb::Value& value, const std::string& what, WorkBudget& budget);

Status check_storages(const fb::Program& program, std::span<const uint8_t> segment, bool deep);
Status check_weights(const fb::Program& program, WorkBudget& budget);

}  // namespace nrt::verify
