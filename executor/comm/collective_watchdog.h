// The watchdog of collectives (torch's ProcessGroupNCCL watchdog, on every backend): a thread that
// watches every traced Work in flight (executor/comm/traced_process_group.h), testing it so that its
// completion is recorded, and fires once for the first Work in flight past its timeout: it logs
// torch's line
//   Watchdog caught collective operation timeout: Work(SeqNum=3, OpType=ALLREDUCE, NumelIn=12,
//   NumelOut=12, Timeout(ms)=5000) ran for 5004 milliseconds before timing out
// and calls the handler it was given (nrt-run's dumps the flight recorder and ends the job with
// MPI_Abort, so that no rank waits forever).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "executor/comm/process_group.h"

namespace nrt::exec {

// What the watchdog knows of one collective in flight. It is watched from the moment it is
// issued: a backend may run it as a blocking call, and a call that never returns times out too.
struct WatchedWork {
  // The backend's Work once the call returned it (tested, never waited on); null before.
  void set_work(std::shared_ptr<Work> w) {
    std::lock_guard<std::mutex> lock(mutex);
    work = std::move(w);
  }
  std::shared_ptr<Work> current_work() {
    std::lock_guard<std::mutex> lock(mutex);
    return work;
  }

  std::mutex mutex;
  std::shared_ptr<Work> work;
  std::chrono::steady_clock::time_point started;
  std::chrono::milliseconds timeout{0};
  std::string description;                       // "Work(SeqNum=3, OpType=ALLREDUCE, ...)"
  std::function<void()> on_completed;            // records the completion (flight recorder)
  std::function<void(const std::string&)> on_failed;     // records a failure or the timeout
  std::atomic<bool> finished{false};             // set by whoever saw it end first

  // Ends it once, whoever sees it first: records the completion, or the failure `why`.
  void mark_completed() {
    if (!finished.exchange(true) && on_completed) on_completed();
  }
  void mark_failed(const std::string& why) {
    if (!finished.exchange(true) && on_failed) on_failed(why);
  }
};

class CollectiveWatchdog {
 public:
  // `on_timeout` receives the CollectiveTimeout error (its message the torch-style line); it runs
  // on the watchdog's thread, at most once.
  explicit CollectiveWatchdog(std::function<void(const Error&)> on_timeout,
                              std::chrono::milliseconds poll = std::chrono::milliseconds(50));
  // Stops the thread and joins it; destroyed on the watchdog's own thread (a completion it recorded
  // released the last owner), it lets the thread end by itself instead.
  ~CollectiveWatchdog();
  CollectiveWatchdog(const CollectiveWatchdog&) = delete;
  CollectiveWatchdog& operator=(const CollectiveWatchdog&) = delete;

  void watch(std::shared_ptr<WatchedWork> work);
  size_t watched() const;  // Works in flight it still watches
  bool fired() const { return state_->fired.load(); }

 private:
  // What the thread uses, shared with it so that it outlives this object when the thread is let go.
  struct State {
    std::function<void(const Error&)> on_timeout;
    std::chrono::milliseconds poll{50};
    std::mutex mutex;
    std::condition_variable wake;
    std::vector<std::shared_ptr<WatchedWork>> works;
    bool stopping = false;
    std::atomic<bool> fired{false};
  };
  static void loop(State& state);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace nrt::exec
