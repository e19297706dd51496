// Where the bytes of each device kind come from, and how they move between devices. One
// Allocator per device kind: the host's is built in (64-byte aligned, zeroed, within the
// process's memory budget, executor/runtime/memory_budget.h); a device backend (CUDA, next) registers its
// own at static initialisation with register_allocator. Every owned Storage is allocated by, and
// returned to, the allocator of its device; a device kind without one is not available in this
// build (Executor::load says NotSupported, naming it).
#pragma once

#include <cstddef>

#include "core/error.h"
#include "executor/runtime/device.h"

namespace nrt::exec {

class Storage;

class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual DeviceKind kind() const = 0;
  // `bytes` zeroed bytes on `device`; throws std::bad_alloc (MemoryBudgetExceeded past a budget).
  virtual void* allocate(size_t bytes, Device device) = 0;
  // The same for bytes the caller writes in full before anything reads them (a copy's
  // destination): an allocator may leave them as they are. By default they are zeroed too.
  virtual void* allocate_for_overwrite(size_t bytes, Device device) { return allocate(bytes, device); }
  virtual void deallocate(void* data, size_t bytes, Device device) = 0;
  // Copies `bytes` from `src` to `dst`, each on the host or on this allocator's device.
  virtual Status copy(void* dst, Device dst_device, const void* src, Device src_device, size_t bytes) = 0;
  // Whether `device` can be used now (a driver, a device at that index): DeviceUnavailable naming
  // what is missing, else ok. Executor::load asks before anything is allocated there.
  virtual Status check_device(Device) { return {}; }
  // Waits until everything enqueued on `device` so far has run (a profile times each node this
  // way on a device whose kernels run asynchronously). The host has nothing to wait for.
  virtual Status synchronize(Device) { return {}; }
  // The opaque per-device execution context kernels receive (KernelContext::device_context: a
  // CUDA stream, say); nullptr for the host.
  virtual void* execution_context(Device) { return nullptr; }
};

// The allocator of `kind`; nullptr when this build has none.
Allocator* allocator_for(DeviceKind kind);
// Registers the allocator of its kind (not owned; it must outlive every storage). A kind that
// already has one is an InvalidArgument error (the host's is built in).
Status register_allocator(Allocator* allocator);

// Copies `bytes` from `src` (at byte `src_offset`) to `dst` (at `dst_offset`) whatever their
// devices: host to host is a memcpy, anything else goes through the allocator of the device side.
Status copy_storage_bytes(const Storage& dst, size_t dst_offset, const Storage& src, size_t src_offset, size_t bytes);

}  // namespace nrt::exec
