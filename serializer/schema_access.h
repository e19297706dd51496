// Small readers of schema tables that every layer needs: the length of an optional FlatBuffers
// vector, whether a value kind holds a tensor, and an operator's "namespace::name.overload".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "schema/nrt_generated.h"

namespace nrt {

// A vector field may be absent: it then has no elements.
template <typename T>
uint32_t vector_size(const flatbuffers::Vector<T>* vector) {
  return vector ? vector->size() : 0;
}

// A vector field's elements for a range-for: none when the field is absent (a null vector is
// never dereferenced). `for (int32_t r : elements(group->ranks()))`.
template <typename T>
class Elements {
 public:
  explicit Elements(const flatbuffers::Vector<T>* vector) : vector_(vector) {}
  class iterator {
   public:
    iterator(const flatbuffers::Vector<T>* vector, uint32_t index) : vector_(vector), index_(index) {}
    auto operator*() const { return vector_->Get(index_); }
    iterator& operator++() {
      ++index_;
      return *this;
    }
    bool operator!=(const iterator& other) const { return index_ != other.index_; }

   private:
    const flatbuffers::Vector<T>* vector_;
    uint32_t index_;
  };
  iterator begin() const { return {vector_, 0}; }
  iterator end() const { return {vector_, vector_size(vector_)}; }

 private:
  const flatbuffers::Vector<T>* vector_;
};

template <typename T>
Elements<T> elements(const flatbuffers::Vector<T>* vector) {
  return Elements<T>(vector);
}

// TENSOR, DTENSOR and OPTIONAL_TENSOR values carry TensorMeta and bind tensors.
inline bool is_tensor_kind(fb::ValueKind kind) {
  return kind == fb::ValueKind::TENSOR || kind == fb::ValueKind::DTENSOR || kind == fb::ValueKind::OPTIONAL_TENSOR;
}

// "aten::add.Tensor"; the name alone when the overload is empty.
inline std::string operator_target(const fb::Operator& op) {
  std::string out = op.name() ? op.name()->str() : std::string();
  if (op.overload() != nullptr && op.overload()->size() > 0) out += "." + op.overload()->str();
  return out;
}

// The inverse of operator_target: "aten::add.Tensor" -> {"aten::add", "Tensor"}, "aten::add" ->
// {"aten::add", ""}. The overload starts at the first '.' after the namespace's "::".
struct OperatorTarget {
  std::string_view name;
  std::string_view overload;
};
inline OperatorTarget split_operator_target(std::string_view target) {
  const size_t ns = target.find("::");
  const size_t dot = target.find('.', ns == std::string_view::npos ? 0 : ns + 2);
  if (dot == std::string_view::npos) return {target, {}};
  return {target.substr(0, dot), target.substr(dot + 1)};
}

}  // namespace nrt
