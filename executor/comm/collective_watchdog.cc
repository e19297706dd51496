#include "executor/comm/collective_watchdog.h"

#include <algorithm>

namespace nrt::exec {

CollectiveWatchdog::CollectiveWatchdog(std::function<void(const Error&)> on_timeout, std::chrono::milliseconds poll)
    : on_timeout_(std::move(on_timeout)), poll_(poll), thread_([this] { loop(); }) {}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void CollectiveWatchdog::watch(std::shared_ptr<WatchedWork> work) {
  std::lock_guard<std::mutex> lock(mutex_);
  works_.push_back(std::move(work));
}

size_t CollectiveWatchdog::watched() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return works_.size();
}

void CollectiveWatchdog::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    wake_.wait_for(lock, poll_);
    if (stopping_) break;
    std::vector<std::shared_ptr<WatchedWork>> works = works_;  // test outside the lock
    lock.unlock();
    std::shared_ptr<WatchedWork> late;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& w : works) {
      auto work = w->current_work();
      if (!w->finished.load() && work && work->test()) w->mark_completed();
      if (!w->finished.load() && !late && now - w->started > w->timeout) late = w;
    }
    if (late && !fired_.exchange(true)) {
      const auto ran = std::chrono::duration_cast<std::chrono::milliseconds>(now - late->started).count();
      const std::string line = "Watchdog caught collective operation timeout: " + late->description + " ran for " +
                               std::to_string(ran) + " milliseconds before timing out";
      if (late->on_failed) late->on_failed(line);
      if (on_timeout_) on_timeout_(make_error(ErrorCode::CollectiveTimeout, line));
    }
    lock.lock();
    works_.erase(std::remove_if(works_.begin(), works_.end(), [](const auto& w) { return w->finished.load(); }),
                 works_.end());
  }
}

}  // namespace nrt::exec
