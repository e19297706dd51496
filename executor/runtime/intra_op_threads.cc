#include "executor/runtime/intra_op_threads.h"

#include <pthread.h>

#include <algorithm>
#include <atomic>

#include "executor/runtime/libgomp.h"

#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define NRT_TSAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define NRT_TSAN 1
#endif

#ifdef NRT_TSAN
// libgomp is not instrumented: these tell ThreadSanitizer about the ordering its team start and
// end barrier give (the caller's writes before the job, each chunk's writes before the return).
extern "C" void __tsan_acquire(void* address);
extern "C" void __tsan_release(void* address);
#endif

namespace nrt::exec {
namespace {

void happens_before(void* job) {
#ifdef NRT_TSAN
  __tsan_release(job);
#else
  (void)job;
#endif
}

void happens_after(void* job) {
#ifdef NRT_TSAN
  __tsan_acquire(job);
#else
  (void)job;
#endif
}

struct Job {
  const std::function<void(int64_t, int64_t)>* fn;
  int64_t n, chunks;
};

// Each team member takes the chunks of its number, so every chunk's bounds are those of a serial
// split into `chunks` parts whatever size of team OpenMP gives.
void run_chunks(void* data) {
  auto* job = static_cast<Job*>(data);
  happens_after(job);
  const int64_t team = omp_get_num_threads();
  for (int64_t c = omp_get_thread_num(); c < job->chunks; c += team) {
    (*job->fn)(job->n * c / job->chunks, job->n * (c + 1) / job->chunks);
  }
  happens_before(job);
}

std::atomic<int> g_threads{0};
std::atomic<bool> g_team_busy{false};

// libgomp's team does not survive fork(): a child that starts a split, or a oneDNN product on
// several threads, waits forever for members that are not there. A child forked after threads
// were set runs its ops on the caller (as torch's children do).
std::atomic<bool> g_team_may_exist{false};
std::atomic<bool> g_forked_after_team{false};

void note_fork_in_child() {
  if (g_team_may_exist.load()) g_forked_after_team.store(true);
}

[[maybe_unused]] const int g_fork_handler = pthread_atfork(nullptr, nullptr, &note_fork_in_child);

}  // namespace

void set_intra_op_threads(int threads) {
  threads = std::clamp(threads, 0, 1024);
  if (threads > 1) g_team_may_exist.store(true);
  g_threads.store(threads);
}

int intra_op_threads() {
  const int threads = g_threads.load(std::memory_order_relaxed);
  return g_forked_after_team.load(std::memory_order_relaxed) ? std::min(threads, 1) : threads;
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int threads = intra_op_threads();
  const int64_t chunks = std::min<int64_t>(threads, n / std::max<int64_t>(grain, 1));
  // One job at a time: a second caller (another program's thread, or a chunk) runs serially
  // rather than start a second team on cores the first one holds.
  if (chunks <= 1 || omp_in_parallel() || g_team_busy.exchange(true, std::memory_order_acquire)) {
    fn(0, n);
    return;
  }
  Job job{&fn, n, chunks};
  happens_before(&job);
  GOMP_parallel(&run_chunks, &job, static_cast<unsigned>(chunks), 0);
  happens_after(&job);
  g_team_busy.store(false, std::memory_order_release);
}

}  // namespace nrt::exec
