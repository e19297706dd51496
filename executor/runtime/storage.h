// A block of bytes on a device that tensors view. Three kinds: owned (allocated here, 64-byte
// aligned), borrowed (bytes owned elsewhere, e.g. weights in a mapped .nrt file: zero-copy,
// read-only by contract), and arena slices (the execution frame's planned memory).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "executor/runtime/device.h"

namespace nrt::exec {

class Allocator;

class Storage {
 public:
  // Allocates `bytes` zero-initialised bytes on `device` from its Allocator (executor/runtime/allocator.h;
  // the host's: 64-byte aligned, within the process's memory budget, executor/runtime/memory_budget.h):
  // throws MemoryBudgetExceeded past it, std::bad_alloc when the system refuses or the build has
  // no allocator for the device.
  static std::shared_ptr<Storage> allocate(size_t bytes, Device device = {});
  // The same for bytes the caller writes in full before anything reads them: on the host they are
  // not zeroed (Allocator::allocate_for_overwrite).
  static std::shared_ptr<Storage> allocate_for_overwrite(size_t bytes, Device device = {});
  // Views bytes owned by `owner` (kept alive while the storage lives).
  static std::shared_ptr<Storage> borrow(void* data, size_t bytes, std::shared_ptr<const void> owner,
                                         Device device = {});
  // The same for bytes that never change while the storage lives (a loaded program's weights):
  // kernels may keep what they derive from them (a convolution's weights in oneDNN's layout),
  // keyed by the storage. Python's borrowed arrays are not constant: their owner may refill them.
  static std::shared_ptr<Storage> borrow_constant(void* data, size_t bytes, std::shared_ptr<const void> owner,
                                                  Device device = {});
  // The same for host bytes in a read-only private mapping of a file (ProgramFile::mapped()):
  // pages dropped by release_pages are read back from the file when next touched.
  static std::shared_ptr<Storage> borrow_file_mapping(void* data, size_t bytes, std::shared_ptr<const void> owner);

  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  uint8_t* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  Device device() const { return device_; }
  // Borrowed bytes are read-only by contract (a file's weights are mapped PROT_READ): kernels
  // that write into an input refuse such storage instead of faulting.
  bool read_only() const { return !owned_; }
  bool constant() const { return constant_; }
  bool file_mapping() const { return file_mapping_; }

  // Drops the whole pages of [begin, begin + bytes) from the process's resident memory where this
  // storage is a file mapping (elsewhere does nothing: other memory would lose its contents). For
  // weights a kernel keeps a copy of (onednn_kept_weights.h): without it a program's linear
  // weights were resident twice (BERT-base's run peaked at 699 MiB, 385 without); bytes touched again
  // are read back from the file.
  void release_pages(const void* begin, size_t bytes) const;

 private:
  static std::shared_ptr<Storage> allocated(size_t bytes, Device device, bool for_overwrite);
  Storage(uint8_t* data, size_t bytes, Device device, bool owned, std::shared_ptr<const void> owner)
      : data_(data), bytes_(bytes), device_(device), owned_(owned), owner_(std::move(owner)) {}
  uint8_t* data_;
  size_t bytes_;
  Device device_;
  bool owned_;
  bool constant_ = false;
  bool file_mapping_ = false;
  std::shared_ptr<const void> owner_;
  Allocator* allocator_ = nullptr;  // owned storages: where the bytes go back
};

}  // namespace nrt::exec
