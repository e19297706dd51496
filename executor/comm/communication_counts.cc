#include "executor/comm/communication_counts.h"

namespace nrt::exec {

int64_t ring_bytes_sent(std::string_view op, int n, int rank, int64_t bytes, int src) {
  if (n <= 1) return 0;
  if (op == "all_reduce") return 2 * (n - 1) * bytes / n;
  if (op == "all_gather_into_tensor") return (n - 1) * bytes;
  if (op == "reduce_scatter_tensor" || op == "all_to_all_single") return (n - 1) * bytes / n;
  if (op == "broadcast") return rank == (src + n - 1) % n ? 0 : bytes;
  return 0;
}

void CommunicationCounts::add(std::string_view op, const std::string& group, int64_t bytes_sent) {
  std::lock_guard lock(mutex_);
  CollectiveCount& c = counts_[{std::string(op), group}];
  c.op = op;
  c.group = group;
  ++c.count;
  c.bytes_sent += bytes_sent;
}

std::vector<CollectiveCount> CommunicationCounts::snapshot() const {
  std::lock_guard lock(mutex_);
  std::vector<CollectiveCount> out;
  for (const auto& [key, c] : counts_) out.push_back(c);
  return out;
}

int64_t CommunicationCounts::bytes_sent() const {
  std::lock_guard lock(mutex_);
  int64_t total = 0;
  for (const auto& [key, c] : counts_) total += c.bytes_sent;
  return total;
}

void CommunicationCounts::reset() {
  std::lock_guard lock(mutex_);
  counts_.clear();
}

}  // namespace nrt::exec
