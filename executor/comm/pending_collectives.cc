#include "executor/comm/pending_collectives.h"

namespace nrt::exec {

void PendingCollectives::add(const Tensor& output, std::shared_ptr<Work> work) {
  entries_.push_back({output, std::move(work)});
}

Status PendingCollectives::wait(const Tensor& tensor, std::optional<std::chrono::milliseconds> timeout) {
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Tensor& output = entries_[i].output;
    if (output.storage() != tensor.storage() || output.storage_offset() != tensor.storage_offset()) continue;
    Status status = entries_[i].work->wait(timeout);
    if (!status && timeout) return status;  // still in flight: it stays pending
    entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(i));
    return status;
  }
  return {};
}

Status PendingCollectives::wait_all() {
  Status first;
  for (auto& entry : entries_) {
    Status status = entry.work->wait();
    if (first && !status) first = status;
  }
  entries_.clear();
  return first;
}

}  // namespace nrt::exec
