// A strided view of a Storage: dtype (core/scalar_type.h), sizes, strides and offset in
// elements, and the device of its storage. Views share storage; nothing here copies bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/scalar_type.h"
#include "executor/runtime/storage.h"

namespace nrt::exec {

using nrt::ScalarType;

class Tensor {
 public:
  Tensor() = default;
  Tensor(std::shared_ptr<Storage> storage, ScalarType dtype, std::vector<int64_t> sizes, std::vector<int64_t> strides,
         int64_t storage_offset = 0);

  // A new contiguous tensor in freshly allocated memory (zeroed).
  static Tensor empty(ScalarType dtype, std::vector<int64_t> sizes, Device device = {});
  // The same, its elements not zeroed on the host: for a tensor the caller writes in full before
  // reading (a copy's destination; Storage::allocate_for_overwrite).
  static Tensor empty_for_overwrite(ScalarType dtype, std::vector<int64_t> sizes, Device device = {});
  static std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& sizes);

  bool defined() const { return storage_ != nullptr; }
  ScalarType dtype() const { return dtype_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  const std::vector<int64_t>& strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  int64_t dim() const { return static_cast<int64_t>(sizes_.size()); }
  int64_t size(int64_t d) const;  // negative d counts from the end
  int64_t numel() const;
  size_t element_size() const;
  size_t nbytes() const { return static_cast<size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  Device device() const { return storage_ ? storage_->device() : Device{}; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Address of element 0 of the view.
  uint8_t* raw_data() const { return storage_->data() + storage_offset_ * static_cast<int64_t>(element_size()); }
  template <typename T>
  T* data() const {
    return reinterpret_cast<T*>(raw_data());
  }

  // Views (share storage).
  Tensor as_strided(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t storage_offset) const;

  std::string type_string() const;  // "f32[8,64]"

 private:
  std::shared_ptr<Storage> storage_;
  ScalarType dtype_ = ScalarType::FLOAT32;
  std::vector<int64_t> sizes_;
  std::vector<int64_t> strides_;
  int64_t storage_offset_ = 0;
};

}  // namespace nrt::exec
