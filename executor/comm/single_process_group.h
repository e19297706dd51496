// The ProcessGroup of a world of one: every collective is the identity (or a copy into the
// output). Used when a program runs without a launcher: the executor binds every group of the
// program whose only rank is 0 (or whose ranks are empty: the whole world) to it. Groups with more
// ranks stay unbound, and a program with a collective on them fails to load (under mpirun, nrt-run
// binds them to MPI communicators: executor/comm/mpi_process_group.h).
#pragma once

#include <memory>
#include <string>

#include "executor/comm/process_group.h"
#include "schema/nrt_generated.h"

namespace nrt::exec {

class SingleProcessGroup final : public ProcessGroup {
 public:
  explicit SingleProcessGroup(std::string name) : name_(std::move(name)) {}

  const std::string& name() const override { return name_; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string_view backend() const override { return "single"; }
  std::vector<int> global_ranks() const override { return {0}; }  // the one process is the world

  // Every collective completes when issued (completed_work).
  WorkResult all_reduce(Tensor& tensor, ReduceOp op) override;
  WorkResult all_gather_into_tensor(const Tensor& input, Tensor& output) override;
  WorkResult reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp op) override;
  WorkResult all_to_all_single(const Tensor& input, Tensor& output, std::span<const int64_t> output_splits,
                               std::span<const int64_t> input_splits) override;
  WorkResult broadcast(Tensor& tensor, int src) override;
  WorkResult barrier() override { return completed_work({}); }

 private:
  std::string name_;
};

// A registry binding every process group of `program` whose ranks are exactly {0}, or empty (the
// whole world, which is {0} here).
ProcessGroupRegistry single_process_registry(const fb::Program& program);

}  // namespace nrt::exec
