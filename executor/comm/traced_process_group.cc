#include "executor/comm/traced_process_group.h"

#include <chrono>

#include "core/scalar_type.h"
#include "executor/comm/flight_recorder_torch.h"
#include "executor/comm/nan_check.h"

namespace nrt::exec {

struct TracedProcessGroup::Issue {
  uint64_t record_id = 0;
  std::shared_ptr<WatchedWork> watched;  // watched from before the backend is called
};

namespace {

// The Work the caller gets: the backend's, with its completion recorded once (by whoever sees it
// first: the caller's wait or test, or the watchdog's test).
class TracedWork final : public Work {
 public:
  explicit TracedWork(std::shared_ptr<WatchedWork> watched) : watched_(std::move(watched)) {}

  Status wait(std::optional<std::chrono::milliseconds> timeout) override {
    const auto& work = watched_->work;  // set before this Work was handed out: no lock needed here
    Status s = work->wait(timeout);
    if (s) {
      watched_->mark_completed();
    } else if (work->test()) {
      watched_->mark_failed(s.error().message);  // failed (a wait that merely timed out leaves it in flight)
    }
    return s;
  }

  bool test() override {
    const bool done = watched_->work->test();  // set before this Work was handed out
    if (done) watched_->mark_completed();
    return done;
  }

 private:
  std::shared_ptr<WatchedWork> watched_;
};

std::vector<int64_t> sizes_of(const Tensor& t) { return t.defined() ? t.sizes() : std::vector<int64_t>{}; }

}  // namespace

void CollectiveTracing::add_group(const std::string& name, std::vector<int> ranks) {
  std::lock_guard<std::mutex> lock(groups_mutex_);
  groups_[name] = std::move(ranks);
}

FlightRecorderDump CollectiveTracing::dump(std::string reason) const {
  FlightRecorderDump d;
  {
    std::lock_guard<std::mutex> lock(groups_mutex_);
    d.groups = groups_;
  }
  d.rank = rank;
  d.world_size = size;
  d.reason = std::move(reason);
  d.dump_time_ns = wall_clock_ns();
  d.recorded = recorder.recorded();
  d.entries = recorder.entries();
  return d;
}

Result<std::string> CollectiveTracing::write_dump(std::string reason) const {
  const std::string path = options.dump_path(rank);
  std::lock_guard<std::mutex> lock(dump_mutex_);
  if (options.fr_dump_format == FlightRecorderFormat::kTorch) {
    NRT_RETURN_IF_ERROR(write_torch_flight_recorder_dump(dump(std::move(reason)), path));
  } else {
    NRT_RETURN_IF_ERROR(write_flight_recorder_dump(dump(std::move(reason)), path));
  }
  return path;
}

Result<TracedProcessGroup::Issue> TracedProcessGroup::begin(const char* op, const char* op_type,
                                                           const std::vector<const Tensor*>& inputs,
                                                           const std::vector<const Tensor*>& outputs,
                                                           const std::vector<const Tensor*>& checked) {
  CollectiveRecord record;
  record.pg_name = name();
  record.pg_rank = rank();
  record.pg_size = size();
  record.backend = std::string(backend());
  record.collective_seq_id = ++collective_seq_;
  record.op = op;
  record.node = std::string(CollectiveOrigin::current());
  for (const Tensor* t : inputs) {
    record.input_sizes.push_back(sizes_of(*t));
    record.input_dtypes.emplace_back(short_name(t->dtype()));
  }
  for (const Tensor* t : outputs) {
    record.output_sizes.push_back(sizes_of(*t));
    record.output_dtypes.emplace_back(short_name(t->dtype()));
  }
  record.time_created_ns = wall_clock_ns();
  record.timeout_ms = tracing_->options.timeout.count();
  auto watched = std::make_shared<WatchedWork>();
  watched->started = std::chrono::steady_clock::now();
  watched->timeout = tracing_->options.timeout;
  watched->description = "Work(SeqNum=" + std::to_string(record.collective_seq_id) + ", OpType=" + op_type +
                         ", NumelIn=" + std::to_string(record.numel_in()) +
                         ", NumelOut=" + std::to_string(record.numel_out()) +
                         ", Timeout(ms)=" + std::to_string(record.timeout_ms) + ")";
  const int64_t seq = record.collective_seq_id;
  const std::string node = record.node;
  Issue issue;
  issue.record_id = tracing_->recorder.add(std::move(record));
  issue.watched = watched;
  if (tracing_->options.nan_check) {
    for (const Tensor* t : checked) {
      if (auto index = first_nan_index(*t)) {
        const std::string message = "NaN check: rank " + std::to_string(tracing_->rank) + ", process group '" +
                                    name() + "', SeqNum=" + std::to_string(seq) + ", " + op +
                                    (node.empty() ? std::string() : " of node '" + node + "'") +
                                    ": the send buffer " + t->type_string() + " holds a NaN at flat index " +
                                    std::to_string(*index);
        tracing_->recorder.failed(issue.record_id, wall_clock_ns(), message);
        return make_error(ErrorCode::NanInCollective, message);
      }
    }
  }
  std::weak_ptr<CollectiveTracing> tracing = tracing_;
  const uint64_t id = issue.record_id;
  watched->on_completed = [tracing, id] {
    if (auto t = tracing.lock()) t->recorder.completed(id, wall_clock_ns());
  };
  watched->on_failed = [tracing, id](const std::string& why) {
    if (auto t = tracing.lock()) t->recorder.failed(id, wall_clock_ns(), why);
  };
  tracing_->recorder.started(id, wall_clock_ns());
  if (tracing_->watchdog) tracing_->watchdog->watch(watched);
  return issue;
}

WorkResult TracedProcessGroup::finish(const Issue& issue, WorkResult work) {
  const auto& watched = issue.watched;
  if (!work) {
    watched->mark_failed(work.error().message);
    return work;
  }
  watched->set_work(std::move(*work));
  if (watched->work->test()) watched->mark_completed();
  return std::shared_ptr<Work>(std::make_shared<TracedWork>(watched));
}

void TracedProcessGroup::count(const char* op, size_t bytes, int src) {
  tracing_->counts.add(op, name(), ring_bytes_sent(op, size(), rank(), static_cast<int64_t>(bytes), src));
}

WorkResult TracedProcessGroup::all_reduce(Tensor& tensor, ReduceOp op) {
  NRT_TRY(issue, begin("all_reduce", "ALLREDUCE", {&tensor}, {&tensor}, {&tensor}));
  count("all_reduce", tensor.nbytes());
  return finish(*issue, inner_->all_reduce(tensor, op));
}

WorkResult TracedProcessGroup::all_gather_into_tensor(const Tensor& input, Tensor& output) {
  NRT_TRY(issue, begin("all_gather_into_tensor", "ALLGATHER", {&input}, {&output}, {&input}));
  count("all_gather_into_tensor", input.nbytes());
  return finish(*issue, inner_->all_gather_into_tensor(input, output));
}

WorkResult TracedProcessGroup::reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp op) {
  NRT_TRY(issue, begin("reduce_scatter_tensor", "REDUCE_SCATTER", {&input}, {&output}, {&input}));
  count("reduce_scatter_tensor", input.nbytes());
  return finish(*issue, inner_->reduce_scatter_tensor(input, output, op));
}

WorkResult TracedProcessGroup::all_to_all_single(const Tensor& input, Tensor& output,
                                                 std::span<const int64_t> output_splits,
                                                 std::span<const int64_t> input_splits) {
  NRT_TRY(issue, begin("all_to_all_single", "ALLTOALL", {&input}, {&output}, {&input}));
  count("all_to_all_single", input.nbytes());
  return finish(*issue, inner_->all_to_all_single(input, output, output_splits, input_splits));
}

WorkResult TracedProcessGroup::broadcast(Tensor& tensor, int src) {
  // Only the root sends: the others' buffers are overwritten, NaN or not.
  std::vector<const Tensor*> checked;
  if (src == rank()) checked.push_back(&tensor);
  NRT_TRY(issue, begin("broadcast", "BROADCAST", {&tensor}, {&tensor}, checked));
  count("broadcast", tensor.nbytes(), src);
  return finish(*issue, inner_->broadcast(tensor, src));
}

WorkResult TracedProcessGroup::barrier() {
  NRT_TRY(issue, begin("barrier", "BARRIER", {}, {}, {}));
  return finish(*issue, inner_->barrier());
}

void trace_process_groups(ProcessGroupRegistry& registry, const std::shared_ptr<CollectiveTracing>& tracing) {
  registry.wrap_each([&](std::shared_ptr<ProcessGroup> group) -> std::shared_ptr<ProcessGroup> {
    return std::make_shared<TracedProcessGroup>(std::move(group), tracing);
  });
}

}  // namespace nrt::exec
