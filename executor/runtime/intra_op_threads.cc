#include "executor/runtime/intra_op_threads.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace nrt::exec {
namespace {

// One job at a time. A worker joins a job under the mutex while it is posted (fn_ set) and counts
// itself in `active_`; the job ends when every chunk is done and no worker is inside it, so no
// worker ever calls a job's function after run() returned.
class Pool {
 public:
  ~Pool() { resize(0); }

  void resize(int workers) {
    std::lock_guard<std::mutex> busy(run_mutex_);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      ++generation_;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    stop_ = false;
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }

  // false when another job holds the pool: the caller then runs serially.
  bool run(int64_t n, int64_t chunks, const std::function<void(int64_t, int64_t)>& fn) {
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      fn_ = &fn;
      n_ = n;
      chunks_ = chunks;
      next_.store(0);
      done_ = 0;
      ++generation_;
    }
    wake_.notify_all();
    take_chunks(&fn, n, chunks);
    std::unique_lock<std::mutex> lock(mutex_);
    finished_.wait(lock, [&] { return done_ == chunks_ && active_ == 0; });
    fn_ = nullptr;
    return true;
  }

 private:
  void take_chunks(const std::function<void(int64_t, int64_t)>* fn, int64_t n, int64_t chunks) {
    int64_t finished = 0;
    for (int64_t c = next_.fetch_add(1); c < chunks; c = next_.fetch_add(1)) {
      (*fn)(n * c / chunks, n * (c + 1) / chunks);
      ++finished;
    }
    if (finished == 0) return;
    std::lock_guard<std::mutex> lock(mutex_);
    done_ += finished;
    if (done_ == chunks_ && active_ == 0) finished_.notify_all();
  }

  void work() {
    std::unique_lock<std::mutex> lock(mutex_);
    uint64_t seen = generation_;
    while (true) {
      // stop_ too: a worker that starts after a resize asked the workers to stop must not wait.
      wake_.wait(lock, [&] { return generation_ != seen || stop_; });
      seen = generation_;
      if (stop_) return;
      if (fn_ == nullptr) continue;
      const auto* fn = fn_;
      const int64_t n = n_, chunks = chunks_;
      ++active_;
      lock.unlock();
      take_chunks(fn, n, chunks);
      lock.lock();
      --active_;
      if (done_ == chunks_ && active_ == 0) finished_.notify_all();
    }
  }

  std::mutex run_mutex_;  // held by the job running (and by resize)
  std::mutex mutex_;
  std::condition_variable wake_, finished_;
  std::vector<std::thread> threads_;
  uint64_t generation_ = 0;
  bool stop_ = false;
  const std::function<void(int64_t, int64_t)>* fn_ = nullptr;
  int64_t n_ = 0, chunks_ = 0, done_ = 0, active_ = 0;
  std::atomic<int64_t> next_{0};
};

Pool& pool() {
  static Pool* p = new Pool();  // never destroyed: workers may outlive static destruction order
  return *p;
}

std::atomic<int> g_threads{0};

}  // namespace

void set_intra_op_threads(int threads) {
  threads = std::clamp(threads, 0, 1024);
  g_threads.store(threads);
  pool().resize(std::max(threads - 1, 0));
}

int intra_op_threads() { return g_threads.load(std::memory_order_relaxed); }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int threads = intra_op_threads();
  const int64_t chunks = std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1));
  if (chunks <= 1 || !pool().run(n, chunks, fn)) fn(0, n);
}

}  // namespace nrt::exec
