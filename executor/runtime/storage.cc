#include "executor/runtime/storage.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <new>

#include "executor/runtime/allocator.h"

namespace nrt::exec {

namespace {

// Thrown for a device kind this build has no allocator for (a bad_alloc, so callers that handle
// allocation failure report it; Executor::load refuses such devices before allocating).
class DeviceUnavailable final : public std::bad_alloc {
 public:
  explicit DeviceUnavailable(Device device) : message_("device " + device.to_string() + " is not available in this build") {}
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) { return allocated(bytes, device, false); }

std::shared_ptr<Storage> Storage::allocate_for_overwrite(size_t bytes, Device device) {
  return allocated(bytes, device, true);
}

std::shared_ptr<Storage> Storage::allocated(size_t bytes, Device device, bool for_overwrite) {
  Allocator* allocator = allocator_for(device.kind);
  if (allocator == nullptr) throw DeviceUnavailable(device);
  void* data = for_overwrite ? allocator->allocate_for_overwrite(bytes, device) : allocator->allocate(bytes, device);
  std::unique_ptr<Storage> storage;
  try {
    storage.reset(new Storage(static_cast<uint8_t*>(data), bytes, device, true, nullptr));
  } catch (...) {
    allocator->deallocate(data, bytes, device);
    throw;
  }
  storage->allocator_ = allocator;
  // From here the Storage owns the bytes: if the control block cannot be allocated, the
  // unique_ptr's destructor gives them back, once.
  return std::shared_ptr<Storage>(std::move(storage));
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, std::shared_ptr<const void> owner, Device device) {
  return std::shared_ptr<Storage>(new Storage(static_cast<uint8_t*>(data), bytes, device, false, std::move(owner)));
}

std::shared_ptr<Storage> Storage::borrow_constant(void* data, size_t bytes, std::shared_ptr<const void> owner,
                                                  Device device) {
  auto storage = borrow(data, bytes, std::move(owner), device);
  storage->constant_ = true;
  return storage;
}

std::shared_ptr<Storage> Storage::borrow_file_mapping(void* data, size_t bytes, std::shared_ptr<const void> owner) {
  auto storage = borrow_constant(data, bytes, std::move(owner));
  storage->file_mapping_ = true;
  return storage;
}

void Storage::release_pages(const void* begin, size_t bytes) const {
  if (!file_mapping_) return;
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  // Only pages wholly inside both the range and the storage: a page shared with bytes beyond them
  // stays.
  const auto data = reinterpret_cast<uintptr_t>(data_);
  const uintptr_t from = std::max(reinterpret_cast<uintptr_t>(begin), data);
  const uintptr_t to = std::min(reinterpret_cast<uintptr_t>(begin) + bytes, data + bytes_);
  const uintptr_t first = (from + page - 1) / page * page, last = to / page * page;
  if (last > first) (void)madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED);  // advice only
}

Storage::~Storage() {
  if (owned_ && allocator_ != nullptr) allocator_->deallocate(data_, bytes_, device_);
}

}  // namespace nrt::exec
