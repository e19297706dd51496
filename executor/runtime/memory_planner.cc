#include "executor/runtime/memory_planner.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

namespace nrt::exec {
namespace {

uint64_t aligned(uint64_t bytes) { return (bytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment; }

bool lifetimes_overlap(const BufferRequest& a, const BufferRequest& b) { return a.first <= b.last && b.first <= a.last; }

// Placed buffers, searchable by lifetime. Short-lived buffers are indexed by their first step so
// that a query only walks a window around the request; long-lived ones (rare: graph outputs,
// values used far away) are scanned linearly. Keeps planning near-linear on long chains.
class PlacedBuffers {
 public:
  static constexpr int64_t kShortLifetime = 256;

  void add(size_t index, const BufferRequest& request) {
    if (request.last - request.first < kShortLifetime) {
      by_first_.emplace(request.first, index);
    } else {
      long_lived_.push_back(index);
    }
  }

  template <typename Visit>
  void for_each_overlapping(const BufferRequest& request, std::span<const BufferRequest> requests, Visit visit) const {
    for (size_t i : long_lived_) {
      if (lifetimes_overlap(requests[i], request)) visit(i);
    }
    for (auto it = by_first_.lower_bound(request.first - kShortLifetime); it != by_first_.end() && it->first <= request.last;
         ++it) {
      if (lifetimes_overlap(requests[it->second], request)) visit(it->second);
    }
  }

 private:
  std::multimap<int64_t, size_t> by_first_;
  std::vector<size_t> long_lived_;
};

}  // namespace

MemoryPlan plan_memory(std::span<const BufferRequest> requests) {
  MemoryPlan plan;
  plan.offsets.assign(requests.size(), 0);
  std::vector<size_t> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (requests[a].bytes != requests[b].bytes) return requests[a].bytes > requests[b].bytes;
    return requests[a].first < requests[b].first;
  });

  PlacedBuffers placed;
  std::vector<std::pair<uint64_t, uint64_t>> neighbours;  // (offset, end) of overlapping placed buffers
  for (size_t index : order) {
    const BufferRequest& request = requests[index];
    const uint64_t size = aligned(request.bytes);
    plan.naive_bytes += size;
    if (size == 0) continue;
    neighbours.clear();
    placed.for_each_overlapping(request, requests, [&](size_t other) {
      neighbours.emplace_back(plan.offsets[other], plan.offsets[other] + aligned(requests[other].bytes));
    });
    std::sort(neighbours.begin(), neighbours.end());
    uint64_t best_offset = 0;
    uint64_t best_gap = UINT64_MAX;
    uint64_t cursor = 0;
    for (const auto& [offset, end] : neighbours) {
      if (offset > cursor) {
        const uint64_t gap = offset - cursor;
        if (gap >= size && gap < best_gap) {
          best_gap = gap;
          best_offset = cursor;
        }
      }
      cursor = std::max(cursor, end);
    }
    if (best_gap == UINT64_MAX) best_offset = cursor;
    plan.offsets[index] = best_offset;
    plan.arena_bytes = std::max(plan.arena_bytes, best_offset + size);
    placed.add(index, request);
  }

  // Live peak: sweep over lifetime boundaries (+size at first, -size after last).
  std::map<int64_t, int64_t> delta;
  for (const auto& request : requests) {
    const auto size = static_cast<int64_t>(aligned(request.bytes));
    if (size == 0) continue;
    delta[request.first] += size;
    delta[request.last + 1] -= size;
  }
  int64_t live = 0;
  for (const auto& [step, change] : delta) {
    live += change;
    plan.live_peak_bytes = std::max(plan.live_peak_bytes, static_cast<uint64_t>(live));
  }
  return plan;
}

Status check_memory_plan(std::span<const BufferRequest> requests, const MemoryPlan& plan) {
  if (plan.offsets.size() != requests.size()) {
    return make_error(ErrorCode::InvalidArgument, "memory plan has " + std::to_string(plan.offsets.size()) +
                                                      " offsets for " + std::to_string(requests.size()) + " buffers");
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    if (requests[i].bytes == 0) continue;
    if (plan.offsets[i] % kArenaAlignment != 0 || plan.offsets[i] + requests[i].bytes > plan.arena_bytes) {
      return make_error(ErrorCode::InvalidArgument, "buffer " + std::to_string(i) + " at offset " +
                                                        std::to_string(plan.offsets[i]) +
                                                        " is misaligned or outside the arena");
    }
  }
  for (size_t i = 0; i < requests.size(); ++i) {
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (requests[i].bytes == 0 || requests[j].bytes == 0 || !lifetimes_overlap(requests[i], requests[j])) continue;
      const uint64_t a0 = plan.offsets[i], a1 = a0 + requests[i].bytes;
      const uint64_t b0 = plan.offsets[j], b1 = b0 + requests[j].bytes;
      if (a0 < b1 && b0 < a1) {
        return make_error(ErrorCode::InvalidArgument,
                          "buffers " + std::to_string(i) + " and " + std::to_string(j) +
                              " are live at the same time and overlap in bytes [" + std::to_string(std::max(a0, b0)) +
                              ", " + std::to_string(std::min(a1, b1)) + ")");
      }
    }
  }
  return {};
}

}  // namespace nrt::exec
