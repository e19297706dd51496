// The reliability hooks of collectives, as a ProcessGroup that wraps any other (MPI now, NCCL
// later: every backend gets them). Per group it numbers collectives (collective_seq_id: 1, 2, ...;
// point-to-point has its own counter, p2p_seq_id, for when the seam grows send/recv), and for
// every call it
//   - records op, group, sequence number, input/output sizes and dtypes, the issuing program node
//     (CollectiveOrigin) and its created/started/completed times in the flight recorder;
//   - with the NaN check on, refuses a send buffer holding a NaN (NanInCollective naming rank,
//     group, sequence number, op, node and the first NaN's index; broadcast only on its root);
//   - hands the Work in flight to the watchdog, which fires past the timeout.
// The hooks of one process share one CollectiveTracing.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "executor/comm/collective_hooks.h"
#include "executor/comm/collective_watchdog.h"
#include "executor/comm/communication_counts.h"
#include "executor/comm/flight_recorder.h"
#include "executor/comm/process_group.h"

namespace nrt::exec {

// What every traced group of a process shares.
struct CollectiveTracing {
  explicit CollectiveTracing(CollectiveHooksOptions hooks, int world_rank = 0, int world_size = 1)
      : options(std::move(hooks)), recorder(options.fr_buffer_size), rank(world_rank), size(world_size) {}

  CollectiveHooksOptions options;
  FlightRecorder recorder;
  int rank;  // in the world (dump names, messages)
  int size;
  std::unique_ptr<CollectiveWatchdog> watchdog;  // null: no watchdog
  CommunicationCounts counts;  // what this rank sent, per op and group

  // A traced group's members (world ranks), for the dump's group table.
  void add_group(const std::string& name, std::vector<int> ranks);

  // The recorder's contents as a dump, with `reason`.
  FlightRecorderDump dump(std::string reason) const;
  // Writes that dump to options.dump_path(rank); returns the path written. Dumps are written one at
  // a time (a timeout's and a signal's may come at once, for the same path).
  Result<std::string> write_dump(std::string reason) const;

 private:
  mutable std::mutex dump_mutex_;
  mutable std::mutex groups_mutex_;
  std::map<std::string, std::vector<int>> groups_;
};

class TracedProcessGroup final : public ProcessGroup {
 public:
  TracedProcessGroup(std::shared_ptr<ProcessGroup> inner, std::shared_ptr<CollectiveTracing> tracing)
      : inner_(std::move(inner)), tracing_(std::move(tracing)) {
    tracing_->add_group(inner_->name(), inner_->global_ranks());
  }

  const std::string& name() const override { return inner_->name(); }
  int rank() const override { return inner_->rank(); }
  int size() const override { return inner_->size(); }
  std::string_view backend() const override { return inner_->backend(); }
  std::vector<int> global_ranks() const override { return inner_->global_ranks(); }

  WorkResult all_reduce(Tensor& tensor, ReduceOp op) override;
  WorkResult all_gather_into_tensor(const Tensor& input, Tensor& output) override;
  WorkResult reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp op) override;
  WorkResult all_to_all_single(const Tensor& input, Tensor& output, std::span<const int64_t> output_splits,
                               std::span<const int64_t> input_splits) override;
  WorkResult broadcast(Tensor& tensor, int src) override;
  WorkResult barrier() override;

  int64_t collective_seq_id() const { return collective_seq_.load(); }  // the last one issued
  int64_t p2p_seq_id() const { return p2p_seq_.load(); }

 private:
  struct Issue;
  // Numbers and records a collective; runs the NaN check on `checked` (its send buffers).
  Result<Issue> begin(const char* op, const char* op_type, const std::vector<const Tensor*>& inputs,
                      const std::vector<const Tensor*>& outputs, const std::vector<const Tensor*>& checked);
  // Counts what this rank sends for `op` (tracing_->counts).
  void count(const char* op, size_t bytes, int src = 0);
  // Records the outcome of issuing; wraps a Work in flight for the recorder and the watchdog.
  WorkResult finish(const Issue& issue, WorkResult work);

  std::shared_ptr<ProcessGroup> inner_;
  std::shared_ptr<CollectiveTracing> tracing_;
  std::atomic<int64_t> collective_seq_{0};
  std::atomic<int64_t> p2p_seq_{0};
};

// Wraps every group of `registry` in a TracedProcessGroup sharing `tracing`.
void trace_process_groups(ProcessGroupRegistry& registry, const std::shared_ptr<CollectiveTracing>& tracing);

}  // namespace nrt::exec
