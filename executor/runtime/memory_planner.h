// Static memory planning: one arena, each buffer an offset into it, so that buffers whose
// lifetimes do not overlap share bytes.
//
// A request is (bytes, first step, last step), the lifetime inclusive at both ends: a buffer
// defined at step 3 and last read at step 5 is live at 3, 4 and 5, so an output never shares
// bytes with an input of the same step. Algorithm: greedy by size (largest first, ties by
// earlier first step) with best-fit offsets — among the gaps left by already placed buffers whose
// lifetimes overlap, the smallest that fits, else the end. Sizes are rounded up to
// kArenaAlignment (64 bytes), so every offset is 64-byte aligned. Zero-byte requests get offset 0
// and take no space.
//
// Reported: the arena size (planned peak), the naive sum of all (aligned) sizes, and the live
// peak (the largest total of buffers live at one step: a lower bound no plan can beat).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/error.h"

namespace nrt::exec {

inline constexpr uint64_t kArenaAlignment = 64;

struct BufferRequest {
  uint64_t bytes = 0;
  int64_t first = 0;  // step that defines the buffer
  int64_t last = 0;   // last step that reads it (>= first)
};

struct MemoryPlan {
  std::vector<uint64_t> offsets;  // one per request
  uint64_t arena_bytes = 0;
  uint64_t naive_bytes = 0;
  uint64_t live_peak_bytes = 0;
};

MemoryPlan plan_memory(std::span<const BufferRequest> requests);

// Checks a plan against its requests: every buffer aligned and inside the arena, and no two
// buffers with overlapping lifetimes overlapping in bytes. The error names the first bad pair.
Status check_memory_plan(std::span<const BufferRequest> requests, const MemoryPlan& plan);

}  // namespace nrt::exec
