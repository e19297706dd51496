#include "executor/runtime/storage.h"

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

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) {
  Allocator* allocator = allocator_for(device.kind);
  if (allocator == nullptr) throw DeviceUnavailable(device);
  void* data = allocator->allocate(bytes, device);
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

Storage::~Storage() {
  if (owned_ && allocator_ != nullptr) allocator_->deallocate(data_, bytes_, device_);
}

}  // namespace nrt::exec
