#include "executor/runtime/tensor.h"

#include "core/scalar_type.h"

namespace nrt::exec {

Tensor::Tensor(std::shared_ptr<Storage> storage, ScalarType dtype, std::vector<int64_t> sizes,
               std::vector<int64_t> strides, int64_t storage_offset)
    : storage_(std::move(storage)),
      dtype_(dtype),
      sizes_(std::move(sizes)),
      strides_(std::move(strides)),
      storage_offset_(storage_offset) {}

std::vector<int64_t> Tensor::contiguous_strides(const std::vector<int64_t>& sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t i = sizes.size(); i-- > 1;) strides[i - 1] = strides[i] * std::max<int64_t>(sizes[i], 1);
  return strides;
}

namespace {

size_t bytes_of(ScalarType dtype, const std::vector<int64_t>& sizes) {
  int64_t numel = 1;
  for (int64_t s : sizes) numel *= s;
  return static_cast<size_t>(numel) * nrt::element_size(dtype);
}

}  // namespace

Tensor Tensor::empty(ScalarType dtype, std::vector<int64_t> sizes, Device device) {
  auto storage = Storage::allocate(bytes_of(dtype, sizes), device);
  auto strides = contiguous_strides(sizes);
  return Tensor(std::move(storage), dtype, std::move(sizes), std::move(strides), 0);
}

Tensor Tensor::empty_for_overwrite(ScalarType dtype, std::vector<int64_t> sizes, Device device) {
  auto storage = Storage::allocate_for_overwrite(bytes_of(dtype, sizes), device);
  auto strides = contiguous_strides(sizes);
  return Tensor(std::move(storage), dtype, std::move(sizes), std::move(strides), 0);
}

int64_t Tensor::size(int64_t d) const { return sizes_[static_cast<size_t>(d < 0 ? d + dim() : d)]; }

int64_t Tensor::numel() const {
  int64_t n = 1;
  for (int64_t s : sizes_) n *= s;
  return n;
}

size_t Tensor::element_size() const { return nrt::element_size(dtype_); }

bool Tensor::is_contiguous() const {
  int64_t expected = 1;
  for (size_t i = sizes_.size(); i-- > 0;) {
    if (sizes_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= sizes_[i];
  }
  return true;
}

Tensor Tensor::as_strided(std::vector<int64_t> sizes, std::vector<int64_t> strides, int64_t storage_offset) const {
  return Tensor(storage_, dtype_, std::move(sizes), std::move(strides), storage_offset);
}

std::string Tensor::type_string() const {
  std::string s(nrt::short_name(dtype_));
  s += "[";
  for (size_t i = 0; i < sizes_.size(); ++i) s += (i ? "," : "") + std::to_string(sizes_[i]);
  return s + "]";
}

}  // namespace nrt::exec
