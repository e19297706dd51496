// The Work of a nonblocking MPI collective (MPI_Iallreduce, MPI_Iallgather, ...), private to
// //executor/comm:mpi_process_group. It owns what MPI reads and writes until completion (staging
// buffers, count arrays) and what completes the operation (AVG's division, copies back from
// staging), which runs once MPI reports the request done.
//
// Progress: Open MPI advances a nonblocking collective only inside MPI calls, so with no one
// calling MPI while the graph computes, nothing would overlap. When MPI grants
// MPI_THREAD_MULTIPLE, one progress thread per process tests every request in flight (sleeping
// briefly between rounds that complete nothing); a waiter tests its own request in a loop
// (never at the same time as the progress thread: one test at a time per request), so a waited
// collective advances as fast as a blocking one. Without MPI_THREAD_MULTIPLE every MPI call of
// these files is serialised by mpi_lock().
#pragma once

#include <mpi.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "executor/comm/process_group.h"

namespace nrt::exec::mpi {

// Held around MPI calls when MPI runs without MPI_THREAD_MULTIPLE (a no-op lock otherwise).
std::unique_lock<std::mutex> mpi_lock();
// Records the thread level MPI_Init_thread provided; starts nothing.
void set_thread_multiple(bool multiple);
// Stops and joins the progress thread (before MPI_Finalize).
void stop_progress();

class MpiWork final : public Work {
 public:
  // `what` names the group and collective (timeouts); `failure` is the error of an MPI return
  // code; `finish` completes a successful request; `keep_alive` holds what MPI reads and writes.
  MpiWork(std::string what, std::function<Error(int)> failure, std::function<Status()> finish,
          std::shared_ptr<void> keep_alive)
      : what_(std::move(what)),
        failure_(std::move(failure)),
        finish_(std::move(finish)),
        keep_alive_(std::move(keep_alive)) {}
  ~MpiWork() override;
  MpiWork(const MpiWork&) = delete;
  MpiWork& operator=(const MpiWork&) = delete;

  MPI_Request* request() { return &request_; }
  Status wait(std::optional<std::chrono::milliseconds> timeout = std::nullopt) override;
  bool test() override;

  // Tests the request once (MPI_Test) and completes the Work when MPI reports it done. True once done.
  bool poll();
  // Completes the Work with MPI's return code (finish runs only on success).
  void complete(int rc);
  bool done() {
    std::lock_guard<std::mutex> lock(mutex_);
    return done_;
  }
  // A thread is in wait(), testing the request itself.
  bool has_waiter() const { return waiters_.load() > 0; }

 private:
  std::string what_;
  std::function<Error(int)> failure_;
  std::function<Status()> finish_;
  std::shared_ptr<void> keep_alive_;
  MPI_Request request_ = MPI_REQUEST_NULL;
  std::mutex testing_;  // held around MPI_Test of request_
  std::atomic<int> waiters_{0};
  std::mutex mutex_;
  bool done_ = false;
  Status status_;
};

// Issues a nonblocking collective: `start` calls MPI_I*(..., request); a failure to start is the
// WorkResult's error. The Work is then tracked by the progress thread (when there is one).
WorkResult start_work(std::shared_ptr<MpiWork> work, const std::function<int(MPI_Request*)>& start);

// Runs a blocking collective (`call`: MPI_Allreduce, ...) and returns its Work, complete; a failure
// is the WorkResult's error.
WorkResult run_blocking(std::shared_ptr<MpiWork> work, const std::function<int()>& call);

}  // namespace nrt::exec::mpi
