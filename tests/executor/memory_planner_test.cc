// The memory planner: sharing on chains, best-fit reuse of gaps, alignment, and the non-overlap
// property checked pair by pair on random lifetimes (independently of check_memory_plan).
#include <gtest/gtest.h>

#include <random>

#include "executor/runtime/memory_planner.h"

namespace nrt::exec {
namespace {

// Every pair of buffers live at a common step must occupy disjoint bytes.
void expect_no_overlap(const std::vector<BufferRequest>& requests, const MemoryPlan& plan) {
  ASSERT_EQ(plan.offsets.size(), requests.size());
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % kArenaAlignment, 0u) << i;
    if (requests[i].bytes > 0) {
      EXPECT_LE(plan.offsets[i] + requests[i].bytes, plan.arena_bytes) << i;
    }
    for (size_t j = i + 1; j < requests.size(); ++j) {
      if (requests[i].bytes == 0 || requests[j].bytes == 0) continue;
      const bool live_together = requests[i].first <= requests[j].last && requests[j].first <= requests[i].last;
      if (!live_together) continue;
      const bool disjoint = plan.offsets[i] + requests[i].bytes <= plan.offsets[j] ||
                            plan.offsets[j] + requests[j].bytes <= plan.offsets[i];
      EXPECT_TRUE(disjoint) << "buffers " << i << " and " << j;
    }
  }
}

TEST(MemoryPlannerTest, ChainSharesMemory) {
  std::vector<BufferRequest> requests;
  for (int64_t step = 0; step < 50; ++step) requests.push_back({1000, step, step + 1});
  const MemoryPlan plan = plan_memory(requests);
  expect_no_overlap(requests, plan);
  EXPECT_EQ(plan.naive_bytes, 50u * 1024u);
  EXPECT_EQ(plan.arena_bytes, 2u * 1024u);
  EXPECT_EQ(plan.live_peak_bytes, 2u * 1024u);
  EXPECT_LT(plan.arena_bytes, plan.naive_bytes);
  EXPECT_TRUE(check_memory_plan(requests, plan).ok());
}

TEST(MemoryPlannerTest, BestFitPicksTheSmallestGapThatFits) {
  // Placed largest first. When request 6 (steps 2..9) is placed, the buffers live with it leave
  // two gaps: [0, 768) and [1600, 2048). Best fit takes the smaller one (first fit would take 0).
  std::vector<BufferRequest> requests = {
      {2048, 0, 0},  // -> 0
      {1024, 0, 9},  // -> 2048
      {768, 1, 1},   // -> 0
      {512, 1, 9},   // -> 768
      {320, 1, 9},   // -> 1280
      {192, 1, 1},   // -> 1600
      {128, 2, 9},
  };
  const MemoryPlan plan = plan_memory(requests);
  expect_no_overlap(requests, plan);
  EXPECT_EQ(plan.offsets[3], 768u);
  EXPECT_EQ(plan.offsets[4], 1280u);
  EXPECT_EQ(plan.offsets[6], 1600u);
  EXPECT_EQ(plan.arena_bytes, 3072u);
}

TEST(MemoryPlannerTest, SizesRoundUpToTheAlignment) {
  std::vector<BufferRequest> requests = {{1, 0, 0}, {65, 0, 0}, {0, 0, 0}};
  const MemoryPlan plan = plan_memory(requests);
  expect_no_overlap(requests, plan);
  EXPECT_EQ(plan.naive_bytes, 64u + 128u);
  EXPECT_EQ(plan.arena_bytes, 192u);
  EXPECT_EQ(plan.offsets[2], 0u);
}

TEST(MemoryPlannerTest, RandomLifetimesNeverOverlap) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 40; ++round) {
    std::vector<BufferRequest> requests;
    const int n = 1 + static_cast<int>(rng() % 120);
    for (int i = 0; i < n; ++i) {
      const int64_t first = static_cast<int64_t>(rng() % 100);
      // Mostly short lifetimes, some spanning far (exercises both lookup paths).
      const int64_t length = rng() % 5 == 0 ? static_cast<int64_t>(rng() % 600) : static_cast<int64_t>(rng() % 6);
      requests.push_back({rng() % 5000, first, first + length});
    }
    const MemoryPlan plan = plan_memory(requests);
    expect_no_overlap(requests, plan);
    EXPECT_TRUE(check_memory_plan(requests, plan).ok());
    EXPECT_LE(plan.live_peak_bytes, plan.arena_bytes);
    EXPECT_LE(plan.arena_bytes, plan.naive_bytes);
  }
}

TEST(MemoryPlannerTest, CheckRejectsOverlappingPlans) {
  std::vector<BufferRequest> requests = {{100, 0, 1}, {100, 1, 2}};
  MemoryPlan plan;
  plan.offsets = {0, 64};
  plan.arena_bytes = 256;
  const Status status = check_memory_plan(requests, plan);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("buffers 0 and 1"), std::string::npos);
}

}  // namespace
}  // namespace nrt::exec
