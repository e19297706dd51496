// Sizes or strides of one loop: a vector of int64 that keeps up to kInline dimensions inside the
// object, so the shape bookkeeping a kernel does on every call (broadcast shapes, byte strides,
// coalesced runs) does not touch the heap. Longer ones spill to a heap buffer and behave the same.
// Copies and comparisons are plain loops: for a handful of elements a call into memcpy or
// memcmp costs more than the work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

namespace nrt::exec::cpu {

class DimVector {
 public:
  static constexpr size_t kInline = 8;

  DimVector() = default;
  explicit DimVector(size_t n, int64_t value = 0) { resize(n, value); }
  explicit DimVector(std::span<const int64_t> values) { assign(values); }
  DimVector(const DimVector& other) { assign(other); }
  DimVector(DimVector&& other) noexcept { take(other); }
  DimVector& operator=(const DimVector& other) {
    if (this != &other) assign(other);
    return *this;
  }
  DimVector& operator=(DimVector&& other) noexcept {
    if (this != &other) take(other);
    return *this;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  int64_t* begin() { return data_; }
  int64_t* end() { return data_ + size_; }
  const int64_t* begin() const { return data_; }
  const int64_t* end() const { return data_ + size_; }
  int64_t& operator[](size_t i) { return data_[i]; }
  int64_t operator[](size_t i) const { return data_[i]; }
  int64_t& back() { return data_[size_ - 1]; }
  int64_t back() const { return data_[size_ - 1]; }

  operator std::span<const int64_t>() const { return {data_, size_}; }  // NOLINT: reads like a vector
  std::vector<int64_t> to_vector() const { return {begin(), end()}; }

  void assign(std::span<const int64_t> values) {
    size_ = 0;
    reserve(values.size());
    copy_elements(values.data(), values.size(), data_);
    size_ = values.size();
  }
  // New elements are `value`; existing ones keep theirs.
  void resize(size_t n, int64_t value = 0) {
    reserve(n);
    for (size_t i = size_; i < n; ++i) data_[i] = value;
    size_ = n;
  }
  // New elements are left for the caller to write.
  void resize_for_overwrite(size_t n) {
    reserve(n);
    size_ = n;
  }
  void push_back(int64_t value) {
    if (size_ == capacity_) reserve(2 * capacity_);
    data_[size_++] = value;
  }

 private:
  void reserve(size_t n) {
    if (n <= capacity_) return;
    auto grown = std::make_unique_for_overwrite<int64_t[]>(n);
    copy_elements(data_, size_, grown.get());
    heap_ = std::move(grown);
    data_ = heap_.get();
    capacity_ = n;
  }
  // A heap buffer moves; inline elements are copied. `other` is left empty and usable.
  void take(DimVector& other) {
    if (other.heap_) {
      heap_ = std::move(other.heap_);
      data_ = heap_.get();
      capacity_ = other.capacity_;
    } else {
      heap_.reset();
      data_ = inline_;
      capacity_ = kInline;
      copy_elements(other.inline_, other.size_, inline_);
    }
    size_ = other.size_;
    other.data_ = other.inline_;
    other.size_ = 0;
    other.capacity_ = kInline;
  }

  static void copy_elements(const int64_t* from, size_t n, int64_t* to) {
    for (size_t i = 0; i < n; ++i) to[i] = from[i];
  }

  int64_t* data_ = inline_;  // inline_ or heap_
  size_t size_ = 0;
  size_t capacity_ = kInline;
  std::unique_ptr<int64_t[]> heap_;  // null while the elements fit inline_
  int64_t inline_[kInline];
};

inline bool same_dims(std::span<const int64_t> a, std::span<const int64_t> b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace nrt::exec::cpu
