#include "executor/storage.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "executor/memory_budget.h"

namespace nrt::exec {
namespace {

// What an owned storage of `bytes` allocates (and reserves): whole 64-byte lines.
size_t allocated_bytes(size_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

std::shared_ptr<Storage> Storage::allocate(size_t bytes, Device device) {
  if (bytes > SIZE_MAX - 63) throw MemoryBudgetExceeded(bytes, memory_in_use(), memory_budget());
  const size_t rounded = allocated_bytes(bytes);
  reserve_memory(rounded);  // throws MemoryBudgetExceeded before anything is allocated
  void* data = rounded ? std::aligned_alloc(64, rounded) : nullptr;
  if (rounded && data == nullptr) {
    release_memory(rounded);
    throw std::bad_alloc();
  }
  if (data) std::memset(data, 0, rounded);
  std::unique_ptr<Storage> storage;
  try {
    storage.reset(new Storage(static_cast<uint8_t*>(data), bytes, device, true, nullptr));
  } catch (...) {
    std::free(data);
    release_memory(rounded);
    throw;
  }
  // From here the Storage owns data and reservation: if the control block cannot be allocated,
  // the unique_ptr's destructor gives both back, once.
  return std::shared_ptr<Storage>(std::move(storage));
}

std::shared_ptr<Storage> Storage::borrow(void* data, size_t bytes, std::shared_ptr<const void> owner, Device device) {
  return std::shared_ptr<Storage>(new Storage(static_cast<uint8_t*>(data), bytes, device, false, std::move(owner)));
}

Storage::~Storage() {
  if (owned_) {
    std::free(data_);
    release_memory(allocated_bytes(bytes_));
  }
}

}  // namespace nrt::exec
