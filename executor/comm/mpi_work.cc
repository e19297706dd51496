#include "executor/comm/mpi_work.h"

#include <atomic>
#include <condition_variable>
#include <thread>
#include <vector>

namespace nrt::exec::mpi {
namespace {

std::atomic<bool> g_thread_multiple{false};
std::mutex g_mpi_mutex;

// One thread per process testing every request in flight.
class Progress {
 public:
  static Progress& instance() {
    static Progress* progress = new Progress();  // lives to the end: stop() joins its thread
    return *progress;
  }

  void track(std::shared_ptr<MpiWork> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;  // after MPI_Finalize began: waiters test for themselves
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    works_.push_back(std::move(work));
    wake_.notify_one();
  }

  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return stopped_ || !works_.empty(); });
      if (stopped_) return;
      std::vector<std::shared_ptr<MpiWork>> batch = works_;
      lock.unlock();
      bool completed = false, polled = false;
      for (auto& work : batch) {
        if (work->has_waiter()) continue;  // its waiter tests it: two spinning threads only slow both
        polled = true;
        completed = work->poll() || completed;
      }
      if (!completed) std::this_thread::sleep_for(std::chrono::microseconds(polled ? 20 : 200));
      lock.lock();
      std::erase_if(works_, [](const std::shared_ptr<MpiWork>& work) { return work->done(); });
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<MpiWork>> works_;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace

std::unique_lock<std::mutex> mpi_lock() {
  if (g_thread_multiple.load()) return std::unique_lock<std::mutex>();
  return std::unique_lock<std::mutex>(g_mpi_mutex);
}

void set_thread_multiple(bool multiple) { g_thread_multiple.store(multiple); }

void stop_progress() {
  if (g_thread_multiple.load()) Progress::instance().stop();
}

MpiWork::~MpiWork() {
  // MPI may still write the buffers this Work keeps: they outlive the operation.
  if (!test()) (void)wait();
}

bool MpiWork::poll() {
  if (done()) return true;
  // MPI forbids testing one request from two threads at once: whoever holds testing_ tests it,
  // the other (the progress thread, or a waiter) goes on.
  std::unique_lock<std::mutex> testing(testing_, std::try_to_lock);
  if (!testing.owns_lock() || done()) return done();
  int flag = 0;
  int rc = MPI_SUCCESS;
  {
    auto serial = mpi_lock();
    rc = MPI_Test(&request_, &flag, MPI_STATUS_IGNORE);
  }
  if (rc != MPI_SUCCESS || flag) complete(rc);
  return rc != MPI_SUCCESS || flag;
}

void MpiWork::complete(int rc) {
  Status status;
  if (rc != MPI_SUCCESS) {
    status = failure_(rc);
  } else if (finish_) {
    status = finish_();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (done_) return;
  status_ = std::move(status);
  done_ = true;
  keep_alive_.reset();
}

bool MpiWork::test() { return poll(); }

Status MpiWork::wait(std::optional<std::chrono::milliseconds> timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout.value_or(std::chrono::milliseconds(0));
  // The waiter tests the request itself: a collective's rounds advance at the pace of MPI_Test
  // calls, and waking on the progress thread's signal would add its sleep to every round.
  struct Waiting {
    std::atomic<int>& waiters;
    explicit Waiting(std::atomic<int>& w) : waiters(w) { ++waiters; }
    ~Waiting() { --waiters; }
  } waiting(waiters_);
  for (uint64_t spins = 0; !poll(); ++spins) {
    if (timeout && std::chrono::steady_clock::now() >= deadline) {
      return make_error(ErrorCode::CollectiveFailed, what_ + ": did not complete within " +
                                                         std::to_string(timeout->count()) + " ms");
    }
    // As MPI_Wait does, spin on the test; after a while, let other threads of the machine run.
    if (spins > 1000) std::this_thread::yield();
  }
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

WorkResult start_work(std::shared_ptr<MpiWork> work, const std::function<int(MPI_Request*)>& start) {
  int rc = MPI_SUCCESS;
  {
    auto serial = mpi_lock();
    rc = start(work->request());
  }
  if (rc != MPI_SUCCESS) {
    *work->request() = MPI_REQUEST_NULL;
    work->complete(rc);
    return work->wait().error();  // the failure, as the Result's error
  }
  if (g_thread_multiple.load()) Progress::instance().track(work);
  return std::shared_ptr<Work>(std::move(work));
}

WorkResult run_blocking(std::shared_ptr<MpiWork> work, const std::function<int()>& call) {
  int rc = MPI_SUCCESS;
  {
    auto serial = mpi_lock();
    rc = call();
  }
  work->complete(rc);
  if (Status s = work->wait(); !s) return s.error();
  return std::shared_ptr<Work>(std::move(work));
}

}  // namespace nrt::exec::mpi
