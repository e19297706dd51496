#include "executor/comm/stage_deadline.h"

#include <cstdio>

namespace nrt::exec {

StageDeadline::StageDeadline(std::chrono::milliseconds timeout, std::function<void()> on_expired) {
  thread_ = std::thread([this, timeout, on_expired = std::move(on_expired)] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (finished_.wait_for(lock, timeout, [this] { return done_; })) return;
    lock.unlock();
    on_expired();
  });
}

StageDeadline::~StageDeadline() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    done_ = true;
  }
  finished_.notify_all();
  thread_.join();
}

Error stage_timeout_error(int rank, const std::string& stage, std::chrono::milliseconds timeout) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", static_cast<double>(timeout.count()) / 1000.0);
  return make_error(ErrorCode::CollectiveTimeout,
                    "rank " + std::to_string(rank) + ": '" + stage + "' did not complete within " + seconds +
                        " s (NRT_COLLECTIVE_TIMEOUT_S): another rank is not taking part (it may be stuck, or hold a "
                        "program that never reaches this stage)");
}

}  // namespace nrt::exec
