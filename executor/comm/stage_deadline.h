// A deadline on one stage of a launched job that waits on other ranks outside the watched
// collectives of a run: agreeing before it (on failures, on the program, on what each rank will
// communicate), creating the communicators, gathering reports after it. A rank that never takes
// part (stuck, or holding a program that never reaches the stage) would otherwise leave the
// others waiting forever, since the collective watchdog (collective_watchdog.h) watches only the
// program's own collectives. Past its timeout the handler runs once, on the deadline's own thread,
// with a CollectiveTimeout naming the stage (nrt-run's logs it and ends the job with MPI_Abort);
// leaving the scope in time cancels it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "core/error.h"

namespace nrt::exec {

class StageDeadline {
 public:
  StageDeadline(std::chrono::milliseconds timeout, std::function<void()> on_expired);
  ~StageDeadline();  // cancels, and joins the thread
  StageDeadline(const StageDeadline&) = delete;
  StageDeadline& operator=(const StageDeadline&) = delete;

 private:
  std::mutex mutex_;
  std::condition_variable finished_;
  bool done_ = false;
  std::thread thread_;
};

// The error a stage past its deadline ends with: "rank 1: 'agreeing on the program' did not
// complete within 5 s: another rank is not taking part (...)".
Error stage_timeout_error(int rank, const std::string& stage, std::chrono::milliseconds timeout);

}  // namespace nrt::exec
