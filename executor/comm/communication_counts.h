// What this rank sent, per collective and group: the communication report of nrt-run --json
// (what torch's CommDebugMode tells its users), counted by the traced process groups.
//
// Bytes sent are those a ring implementation sends from this rank (the formulas behind
// nccl-tests' bus bandwidth, REFERENCE.md §6), so they do not depend on what MPI picks:
//   all_reduce              2 (n-1)/n x bytes
//   all_gather_into_tensor  (n-1) x input bytes
//   reduce_scatter_tensor   (n-1)/n x input bytes
//   all_to_all_single       (n-1)/n x input bytes
//   broadcast               bytes, except the last rank of the ring (src - 1 mod n): 0
// A group of one sends nothing.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace nrt::exec {

struct CollectiveCount {
  std::string op;     // "all_reduce", "all_gather_into_tensor", ...
  std::string group;  // process group name
  int64_t count = 0;
  int64_t bytes_sent = 0;
};

int64_t ring_bytes_sent(std::string_view op, int group_size, int group_rank, int64_t input_bytes, int src = 0);

class CommunicationCounts {
 public:
  void add(std::string_view op, const std::string& group, int64_t bytes_sent);
  std::vector<CollectiveCount> snapshot() const;  // by op, then group
  int64_t bytes_sent() const;
  void reset();

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, CollectiveCount> counts_;
};

}  // namespace nrt::exec
