#include "executor/runtime/allocator.h"

#include <array>
#include <cstdlib>
#include <cstring>
#include <new>

#include "executor/runtime/memory_budget.h"
#include "executor/runtime/storage.h"

namespace nrt::exec {
namespace {

// What a host allocation of `bytes` takes (and reserves): whole 64-byte lines.
size_t host_bytes(size_t bytes) { return (bytes + 63) / 64 * 64; }

class HostAllocator final : public Allocator {
 public:
  DeviceKind kind() const override { return DeviceKind::kCpu; }
  void* allocate(size_t bytes, Device) override {
    void* data = reserved_lines(bytes);
    if (data) std::memset(data, 0, host_bytes(bytes));
    return data;
  }
  // Only the lines' bytes past `bytes` are zeroed: a copy's destination is written in full, and
  // zeroing it first took 1.6% of efficientnet_b0_64's run (its scaled and expanded images).
  void* allocate_for_overwrite(size_t bytes, Device) override {
    void* data = reserved_lines(bytes);
    if (data) std::memset(static_cast<char*>(data) + bytes, 0, host_bytes(bytes) - bytes);
    return data;
  }
  void deallocate(void* data, size_t bytes, Device) override {
    std::free(data);
    release_memory(host_bytes(bytes));
  }
  Status copy(void* dst, Device, const void* src, Device, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
    return {};
  }

 private:
  // Whole 64-byte lines for `bytes`, reserved from the memory budget, not yet written.
  static void* reserved_lines(size_t bytes) {
    if (bytes > SIZE_MAX - 63) throw MemoryBudgetExceeded(bytes, memory_in_use(), memory_budget());
    const size_t rounded = host_bytes(bytes);
    reserve_memory(rounded);  // throws MemoryBudgetExceeded before anything is allocated
    void* data = rounded ? std::aligned_alloc(64, rounded) : nullptr;
    if (rounded && data == nullptr) {
      release_memory(rounded);
      throw std::bad_alloc();
    }
    return data;
  }
};

std::array<Allocator*, kNumDeviceKinds>& allocators() {
  static HostAllocator host;
  static std::array<Allocator*, kNumDeviceKinds> table = [] {
    std::array<Allocator*, kNumDeviceKinds> t{};
    t[static_cast<size_t>(DeviceKind::kCpu)] = &host;
    return t;
  }();
  return table;
}

}  // namespace

Allocator* allocator_for(DeviceKind kind) {
  const auto index = static_cast<size_t>(kind);
  return index < allocators().size() ? allocators()[index] : nullptr;
}

Status register_allocator(Allocator* allocator) {
  const auto index = static_cast<size_t>(allocator->kind());
  if (index >= allocators().size()) return make_error(ErrorCode::InvalidArgument, "allocator of an unknown device kind");
  if (allocators()[index] != nullptr) {
    return make_error(ErrorCode::InvalidArgument, "device " + Device{allocator->kind(), 0}.to_string() +
                                                      " already has an allocator");
  }
  allocators()[index] = allocator;
  return {};
}

Status copy_storage_bytes(const Storage& dst, size_t dst_offset, const Storage& src, size_t src_offset, size_t bytes) {
  if (dst_offset + bytes > dst.bytes() || src_offset + bytes > src.bytes()) {
    return make_error(ErrorCode::InvalidArgument, "copy of " + std::to_string(bytes) + " bytes past a storage's end");
  }
  // The side that is not the host decides how the bytes move (both host: the host's memcpy).
  const Device device = dst.device().kind != DeviceKind::kCpu ? dst.device() : src.device();
  Allocator* allocator = allocator_for(device.kind);
  if (allocator == nullptr) {
    return make_error(ErrorCode::NotSupported, "device " + device.to_string() + " is not available in this build");
  }
  return allocator->copy(dst.data() + dst_offset, dst.device(), src.data() + src_offset, src.device(), bytes);
}

}  // namespace nrt::exec
