#include "executor/storage.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace nrt::exec {

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) {
  const size_t rounded = (bytes + 63) / 64 * 64;
  void* data = rounded ? std::aligned_alloc(64, rounded) : nullptr;
  if (rounded && data == nullptr) throw std::bad_alloc();
  if (data) std::memset(data, 0, rounded);
  return std::shared_ptr<Storage>(new Storage(static_cast<uint8_t*>(data), bytes, device, true, nullptr));
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, std::shared_ptr<const void> owner, Device device) {
  return std::shared_ptr<Storage>(new Storage(static_cast<uint8_t*>(data), bytes, device, false, std::move(owner)));
}

Storage::~Storage() {
  if (owned_) std::free(data_);
}

}  // namespace nrt::exec
