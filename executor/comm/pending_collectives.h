// The collectives of one run that are still in flight, by the tensor each one writes. A
// `_c10d_functional::*` kernel whose node the plan lets defer its wait (every reader of its output
// is a wait_tensor: ExecutionPlan, PlannedNode::defer_collective_wait) leaves its Work here;
// `wait_tensor` waits for the Work of its input, so the nodes scheduled between a collective and
// its wait run while it is in flight. The executor waits for whatever is left when a run ends,
// successful or not, before the frame's memory is used again.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <vector>

#include "executor/comm/process_group.h"
#include "executor/runtime/tensor.h"

namespace nrt::exec {

class PendingCollectives {
 public:
  // `output` (its storage and offset) is written by `work`, which keeps it alive until done.
  void add(const Tensor& output, std::shared_ptr<Work> work);
  // Waits for the collective writing `tensor`; Ok at once when none is in flight for it.
  Status wait(const Tensor& tensor, std::optional<std::chrono::milliseconds> timeout = std::nullopt);
  // Waits for every collective in flight; the first failure is returned, all are waited for.
  Status wait_all();
  bool empty() const { return entries_.empty(); }
  size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    Tensor output;
    std::shared_ptr<Work> work;
  };
  std::vector<Entry> entries_;  // a handful at a time: a linear search is the fastest lookup
};

}  // namespace nrt::exec
