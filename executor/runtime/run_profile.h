// Per-node timings of runs, for `nrt-run --profile` (tables per op target and per node) and
// `--profile-trace` (Chrome trace-event JSON that chrome://tracing and Perfetto open).
//
// An Executor given a RunProfile (Executor::set_profile) times every node of every run with
// steady_clock, around the kernel call and the executor's bookkeeping for that node, and, when
// the profile records shapes, notes the node's tensor arguments ("f32[1,128,64], f32[64]").
// Nodes of subgraphs (control flow) are inside their parent node's time.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "executor/runtime/execution_plan.h"

namespace nrt::exec {

struct NodeTiming {
  uint32_t run = 0;  // 0-based index of the run
  uint32_t node = 0;  // index into the plan's nodes
  int64_t start_ns = 0;  // since the profile's first run began
  int64_t duration_ns = 0;
  std::string shapes;  // the node's tensor arguments, when recorded
};

class RunProfile {
 public:
  explicit RunProfile(bool record_shapes = false) : record_shapes_(record_shapes) {}

  bool record_shapes() const { return record_shapes_; }
  void begin_run();
  void record(uint32_t node, std::chrono::steady_clock::time_point start, std::chrono::steady_clock::time_point end,
              std::string shapes);

  const std::vector<NodeTiming>& timings() const { return timings_; }
  uint32_t runs() const { return runs_; }

 private:
  bool record_shapes_;
  uint32_t runs_ = 0;
  std::chrono::steady_clock::time_point origin_{};
  std::vector<NodeTiming> timings_;
};

// One row of a profile table: an op target, or one node (name and target).
struct ProfileRow {
  std::string name;    // the target, or the node's name
  std::string target;
  uint64_t count = 0;  // calls over all runs
  double total_ms = 0;
  double mean_ms = 0;
  double share = 0;    // of the total of all nodes, 0..1
};

// Rows sorted by total time, largest first.
std::vector<ProfileRow> profile_by_target(const RunProfile& profile, const ExecutionPlan& plan);
std::vector<ProfileRow> profile_by_node(const RunProfile& profile, const ExecutionPlan& plan);

// The Chrome trace-event JSON of the profile's last run: one complete ("ph": "X") event per
// node, named by its target, with the node's name and shapes as args; `pid` is `rank`.
std::string chrome_trace_json(const RunProfile& profile, const ExecutionPlan& plan, int rank = 0);

}  // namespace nrt::exec
