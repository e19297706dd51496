// The process's memory budget: an upper bound on the bytes that tensors allocated by nrt
// (Storage::allocate: planned arenas, kernel outputs, inputs) hold at once. No size a file
// declares, nor a symbolic size bound from an input, can make nrt allocate past it; an
// allocation that would is refused with MemoryBudgetExceeded before any memory is touched.
// The default is the memory the machine has available when the budget is first consulted;
// tools set it from --max-memory or NRT_MAX_MEMORY. Mapped weights (file-backed, read-only)
// do not count.
#pragma once

#include <cstdint>
#include <new>
#include <string>
#include <string_view>

#include "core/error.h"

namespace nrt::exec {

// Thrown by Storage::allocate when `bytes` would take the process past its budget. A bad_alloc,
// so code that already handles allocation failure handles this too.
class MemoryBudgetExceeded : public std::bad_alloc {
 public:
  MemoryBudgetExceeded(uint64_t bytes, uint64_t in_use, uint64_t limit);
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  std::string message_;
};

// MemAvailable of /proc/meminfo (falls back to the free physical pages).
uint64_t available_memory_bytes();

// "1048576", "512M", "8GiB", "1.5G": bytes with an optional binary suffix (K, M, G, T, with or
// without "i" and "B"). Zero, negative, fractional bytes, NaN and overflow are refused.
Result<uint64_t> parse_memory_size(std::string_view text);

// The limit: set_memory_budget's, else available_memory_bytes() when first asked.
uint64_t memory_budget();
void set_memory_budget(uint64_t bytes);
// Sets the budget from a tool's --max-memory value, else NRT_MAX_MEMORY, else leaves the default;
// a malformed value is an error naming its source.
Status apply_memory_budget(const std::string& max_memory);

// Bytes nrt's own allocations hold now.
uint64_t memory_in_use();

// Reserves `bytes` or throws MemoryBudgetExceeded; release gives them back. For Storage.
void reserve_memory(uint64_t bytes);
void release_memory(uint64_t bytes);

// The error for an allocation refused or failed while doing `what` (a node, a plan).
Error memory_error(const std::string& what, const std::bad_alloc& failure);

}  // namespace nrt::exec
