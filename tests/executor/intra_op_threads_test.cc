// Threads inside ops (executor/runtime/intra_op_threads.h): parallel_for covers every index exactly
// once in contiguous chunks, at most one per thread and none under the grain; a call made while
// another runs runs serially on its caller; unset, it runs on the caller alone; callers on many
// threads all complete; the chunks run on OpenMP's team (oneDNN's threads), the caller as its first
// member; a child forked after a split runs on its caller rather than wait for the team. That
// kernels give the same bits at any thread count is tests/threads_test.sh's (real models through
// nrt-run).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/libgomp.h"

namespace nrt::exec {
namespace {

struct Chunks {
  std::vector<std::pair<int64_t, int64_t>> seen;
  std::set<std::thread::id> threads;
};

Chunks run(int64_t n, int64_t grain) {
  Chunks c;
  std::mutex mutex;
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  parallel_for(n, grain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
    std::lock_guard<std::mutex> lock(mutex);
    c.seen.emplace_back(begin, end);
    c.threads.insert(std::this_thread::get_id());
  });
  for (int64_t i = 0; i < n; ++i) EXPECT_EQ(hits[static_cast<size_t>(i)].load(), 1) << "index " << i;
  return c;
}

TEST(IntraOpThreads, UnsetRunsOnTheCaller) {
  set_intra_op_threads(0);
  EXPECT_EQ(intra_op_threads(), 0);
  const Chunks c = run(100000, 10);
  ASSERT_EQ(c.seen.size(), 1u);
  EXPECT_EQ(c.seen[0], std::make_pair(int64_t{0}, int64_t{100000}));
  EXPECT_EQ(*c.threads.begin(), std::this_thread::get_id());
}

TEST(IntraOpThreads, CoversEveryIndexOnceInChunksNoSmallerThanTheGrain) {
  for (int threads : {2, 3, 4}) {
    set_intra_op_threads(threads);
    for (int repeat = 0; repeat < 50; ++repeat) {
      const Chunks c = run(1000 + repeat, 100);
      EXPECT_LE(c.seen.size(), static_cast<size_t>(threads));
      EXPECT_GE(c.seen.size(), 2u);
      for (const auto& [begin, end] : c.seen) EXPECT_GE(end - begin, 100);
    }
    // Too little work for two chunks: one, on the caller.
    const Chunks small = run(150, 100);
    EXPECT_EQ(small.seen.size(), 1u);
  }
  set_intra_op_threads(0);
}

TEST(IntraOpThreads, ChunksRunOnOpenMpsTeamWithTheCallerFirst) {
  set_intra_op_threads(2);
  struct Seen {
    int in_parallel, number, team;
    std::thread::id thread;
  };
  for (int repeat = 0; repeat < 20; ++repeat) {
    std::vector<Seen> seen(2);
    parallel_for(2, 1, [&](int64_t begin, int64_t end) {
      ASSERT_EQ(end, begin + 1);
      seen[static_cast<size_t>(begin)] = {omp_in_parallel(), omp_get_thread_num(), omp_get_num_threads(),
                                          std::this_thread::get_id()};
    });
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(seen[static_cast<size_t>(c)].in_parallel, 1) << "chunk " << c;
      EXPECT_EQ(seen[static_cast<size_t>(c)].number, c) << "chunk " << c;
      EXPECT_EQ(seen[static_cast<size_t>(c)].team, 2) << "chunk " << c;
    }
    EXPECT_EQ(seen[0].thread, std::this_thread::get_id());
    EXPECT_NE(seen[1].thread, std::this_thread::get_id());
  }
  EXPECT_EQ(omp_in_parallel(), 0);
  set_intra_op_threads(0);
}

TEST(IntraOpThreads, AChildForkedAfterASplitRunsOnItsCaller) {
  set_intra_op_threads(2);
  const Chunks parent = run(1000, 10);
  ASSERT_EQ(parent.seen.size(), 2u);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // libgomp's team is not in this process: a split here would wait for it forever.
    alarm(20);
    int64_t chunks = 0, covered = 0;
    parallel_for(1000, 10, [&](int64_t begin, int64_t end) {
      ++chunks;
      covered += end - begin;
    });
    _exit(intra_op_threads() == 1 && chunks == 1 && covered == 1000 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status)) << "the child was ended by signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0);
  // The parent keeps its threads.
  EXPECT_EQ(intra_op_threads(), 2);
  EXPECT_EQ(run(1000, 10).seen.size(), 2u);
  set_intra_op_threads(0);
}

TEST(IntraOpThreads, ANestedCallRunsSerially) {
  set_intra_op_threads(2);
  std::atomic<int64_t> total{0};
  parallel_for(4, 1, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      parallel_for(1000, 10, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
    }
  });
  EXPECT_EQ(total.load(), 4000);
  set_intra_op_threads(0);
}

TEST(IntraOpThreads, CallsFromManyThreadsAllComplete) {
  set_intra_op_threads(2);
  std::atomic<int64_t> total{0};
  std::vector<std::thread> callers;
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&] {
      for (int i = 0; i < 200; ++i) parallel_for(1000, 10, [&](int64_t b, int64_t e) { total.fetch_add(e - b); });
    });
  }
  for (auto& t : callers) t.join();
  EXPECT_EQ(total.load(), 4 * 200 * 1000);
  set_intra_op_threads(0);
}

}  // namespace
}  // namespace nrt::exec
