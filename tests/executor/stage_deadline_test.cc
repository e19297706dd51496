// executor/comm/stage_deadline.h: a stage that ends in time cancels its deadline; one that does
// not gets the handler once, with an error naming the rank, the stage and the timeout.
#include "executor/comm/stage_deadline.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace nrt::exec {
namespace {

using std::chrono::milliseconds;

TEST(StageDeadline, AStageThatEndsInTimeNeverFires) {
  std::atomic<int> fired{0};
  {
    StageDeadline deadline(milliseconds(500), [&] { ++fired; });
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_EQ(fired.load(), 0);
}

TEST(StageDeadline, AStagePastItsTimeoutFiresOnceWithoutWaitingForTheStage) {
  std::atomic<int> fired{0};
  const auto started = std::chrono::steady_clock::now();
  std::chrono::steady_clock::time_point when;
  {
    StageDeadline deadline(milliseconds(50), [&] {
      when = std::chrono::steady_clock::now();
      ++fired;
    });
    std::this_thread::sleep_for(milliseconds(300));  // the stage, still waiting
  }
  EXPECT_EQ(fired.load(), 1);
  EXPECT_GE(when - started, milliseconds(50));
}

TEST(StageDeadline, TheErrorNamesRankStageAndTimeout) {
  const Error error = stage_timeout_error(3, "agreeing on the program", milliseconds(2500));
  EXPECT_EQ(error.code, ErrorCode::CollectiveTimeout);
  EXPECT_EQ(error.message.rfind("rank 3: 'agreeing on the program' did not complete within 2.5 s", 0), 0u) << error.message;
}

}  // namespace
}  // namespace nrt::exec
