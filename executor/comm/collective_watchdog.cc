#include "executor/comm/collective_watchdog.h"

#include <algorithm>

namespace nrt::exec {

CollectiveWatchdog::CollectiveWatchdog(std::function<void(const Error&)> on_timeout, std::chrono::milliseconds poll)
    : state_(std::make_shared<State>()) {
  state_->on_timeout = std::move(on_timeout);
  state_->poll = poll;
  thread_ = std::thread([state = state_] { loop(*state); });
}

CollectiveWatchdog::~CollectiveWatchdog() {
  {
    std::lock_guard<std::mutex> lock(state_->mutex);
    state_->stopping = true;
  }
  state_->wake.notify_all();
  // The last owner of the watchdog can be its own thread: a completion it records may drop the
  // last reference to what owns the watchdog (the tracing). That thread cannot join itself; it
  // is let go, and ends at its next check of `stopping` (its state is its own to keep).
  if (thread_.get_id() == std::this_thread::get_id()) {
    thread_.detach();
  } else {
    thread_.join();
  }
}

void CollectiveWatchdog::watch(std::shared_ptr<WatchedWork> work) {
  std::lock_guard<std::mutex> lock(state_->mutex);
  state_->works.push_back(std::move(work));
}

size_t CollectiveWatchdog::watched() const {
  std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->works.size();
}

void CollectiveWatchdog::loop(State& state) {
  std::unique_lock<std::mutex> lock(state.mutex);
  while (!state.stopping) {
    state.wake.wait_for(lock, state.poll);
    if (state.stopping) break;
    std::vector<std::shared_ptr<WatchedWork>> works = state.works;  // test outside the lock
    lock.unlock();
    std::shared_ptr<WatchedWork> late;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& w : works) {
      auto work = w->current_work();
      if (!w->finished.load() && work && work->test()) w->mark_completed();
      if (!w->finished.load() && !late && now - w->started > w->timeout) late = w;
    }
    // A watchdog stopped meanwhile (its owner may be gone) fires no more.
    if (late) {
      lock.lock();
      if (state.stopping) late = nullptr;
      lock.unlock();
    }
    if (late && !state.fired.exchange(true)) {
      const auto ran = std::chrono::duration_cast<std::chrono::milliseconds>(now - late->started).count();
      const std::string line = "Watchdog caught collective operation timeout: " + late->description + " ran for " +
                               std::to_string(ran) + " milliseconds before timing out";
      if (late->on_failed) late->on_failed(line);
      if (state.on_timeout) state.on_timeout(make_error(ErrorCode::CollectiveTimeout, line));
    }
    lock.lock();
    state.works.erase(
        std::remove_if(state.works.begin(), state.works.end(), [](const auto& w) { return w->finished.load(); }),
        state.works.end());
  }
}

}  // namespace nrt::exec
