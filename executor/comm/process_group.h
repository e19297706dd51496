// The seam for distributed execution. A ProcessGroup is a runtime handle over some transport
// (single process now; MPI, NCCL later) that implements the collectives torch's functional
// collectives need. Programs name their groups (Program.process_groups); the executor binds each
// name, once at load time, to the group a ProcessGroupRegistry holds for it, and kernels of
// `_c10d_functional::*` reach the group through the ProcessGroupRef argument they receive.
//
// Contracts for every implementation: collectives are called in the same order on every member
// rank; tensors live on a device the implementation supports (an error otherwise); `output`
// tensors are preallocated by the caller with the shapes documented per call; a failure is a
// Status naming the group and the collective, never an abort.
//
// Every collective is asynchronous: it checks its arguments (a refusal is the Result's error,
// before anything is sent), starts, and returns the Work of the operation in flight. Until
// that Work completes, the caller keeps the tensors alive and neither reads the outputs nor
// writes the inputs; once `wait` returns Ok (or `test` says done), the outputs hold the results.
// Backends that complete on the spot return completed_work(). A Work dropped before it completes
// waits for it (buffers in use by a transport are never freed under it).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "executor/runtime/tensor.h"
#include "core/error.h"
#include "core/runtime_enums.h"

namespace nrt::exec {

// One collective in flight.
class Work {
 public:
  virtual ~Work() = default;
  // Blocks until the collective completes and returns its outcome. With a timeout, gives up
  // after it with CollectiveFailed naming the collective (the operation stays in flight).
  virtual Status wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt) = 0;
  // Polls without blocking: true once the collective completed (wait then returns at once).
  virtual bool test() = 0;
};

using WorkResult = Result<std::shared_ptr<Work>>;

// The Work of a collective that finished when it was issued with `status` (its error, if any,
// becomes the WorkResult's).
WorkResult completed_work(Status status);

// Issues and waits: the synchronous form of any collective (`wait_for(group.barrier())`).
Status wait_for(WorkResult work, std::optional<std::chrono::milliseconds> timeout = std::nullopt);

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;

  virtual const std::string& name() const = 0;
  virtual int rank() const = 0;  // this process's rank within the group
  virtual int size() const = 0;
  virtual std::string_view backend() const = 0;  // "single", "mpi", "nccl", ...
  // The world ranks of the members, in group-rank order; empty when the backend cannot tell.
  // (torch's flight-recorder dumps list each group's members: NRT_FR_DUMP_FORMAT=torch.)
  virtual std::vector<int> global_ranks() const { return {}; }

  // In place: every rank ends with the reduction of all ranks' `tensor`.
  virtual WorkResult all_reduce(Tensor& tensor, ReduceOp op) = 0;
  // `output` has size() times the rows of `input` along dim 0, rank r's rows at block r.
  virtual WorkResult all_gather_into_tensor(const Tensor& input, Tensor& output) = 0;
  // `input` has size() blocks along dim 0; rank r receives the reduction of block r.
  virtual WorkResult reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp op) = 0;
  // Rows along dim 0: send input_splits[r] rows to rank r, receive output_splits[r] rows from it.
  virtual WorkResult all_to_all_single(const Tensor& input, Tensor& output, std::span<const int64_t> output_splits,
                                       std::span<const int64_t> input_splits) = 0;
  // In place: every rank ends with rank `src`'s tensor.
  virtual WorkResult broadcast(Tensor& tensor, int src) = 0;
  virtual WorkResult barrier() = 0;
};

// Who issues collectives on this thread while it lives (the executor sets it around collective
// nodes): the program node, which the flight recorder writes beside each collective, and whether
// the caller waits for them at once (a kernel that cannot leave its collective in flight). A
// backend may run a collective waited for at once as a blocking call, and return its Work complete.
class CollectiveOrigin {
  struct Origin {
    std::string_view node;
    bool waited_at_once;
  };

 public:
  explicit CollectiveOrigin(std::string_view node, bool waited_at_once = false) : previous_(current_) {
    current_ = Origin{node, waited_at_once};
  }
  ~CollectiveOrigin() { current_ = previous_; }
  CollectiveOrigin(const CollectiveOrigin&) = delete;
  CollectiveOrigin& operator=(const CollectiveOrigin&) = delete;
  static std::string_view current() { return current_.node; }
  static bool waited_at_once() { return current_.waited_at_once; }

 private:
  inline static thread_local Origin current_{};
  Origin previous_;
};

// Binds group names to ProcessGroups. The executor consults it once, at load time.
class ProcessGroupRegistry {
 public:
  void bind(std::string name, std::shared_ptr<ProcessGroup> group) { groups_[std::move(name)] = std::move(group); }
  ProcessGroup* find(std::string_view name) const {
    auto it = groups_.find(name);
    return it == groups_.end() ? nullptr : it->second.get();
  }
  size_t size() const { return groups_.size(); }
  // Replaces every group by wrap(group) (the reliability hooks: executor/comm/traced_process_group.h).
  template <typename Wrap>
  void wrap_each(Wrap wrap) {
    for (auto& [name, group] : groups_) group = wrap(std::move(group));
  }

 private:
  std::map<std::string, std::shared_ptr<ProcessGroup>, std::less<>> groups_;
};

}  // namespace nrt::exec
