// Small readers of schema tables that every layer needs: the length of an optional FlatBuffers
// vector, whether a value kind holds a tensor, and an operator's "namespace::name.overload".
#pragma once

#include <cstdint>
#include <string>

#include "schema/nrt_generated.h"

namespace nrt {

// A vector field may be absent: it then has no elements.
template <typename T>
uint32_t vector_size(const flatbuffers::Vector<T>* vector) {
  return vector ? vector->size() : 0;
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

}  // namespace nrt
