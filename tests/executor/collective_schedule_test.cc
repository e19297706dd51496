// The collective schedule ranks compare when each runs its own program: torch's functional
// collectives in order with op, group, reduce op and dtype; waits and sizes left out.
#include <gtest/gtest.h>

#include <cstdlib>

#include "executor/comm/collective_schedule.h"
#include "serializer/open_program.h"
#include "tests/runfile.h"

namespace nrt::exec {
namespace {

using nrt::testing::runfile;

TEST(CollectiveSchedule, TorchFunctionalCollectivesInOrder) {
  OpenOptions options;
  options.format = ProgramFormat::kPt2;
  auto file = open_program(runfile("testdata/torch/collectives/model.pt2"), options);
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  const auto schedule = collective_schedule(file->program());
  ASSERT_EQ(schedule.size(), 2u);
  EXPECT_EQ(schedule[0], "_c10d_functional::all_reduce.default group=0 reduce=sum f32");
  EXPECT_EQ(schedule[1], "_c10d_functional::all_gather_into_tensor.default group=0 f32");

  const std::string line = collective_schedule_line(schedule);
  EXPECT_EQ(line.rfind("2 collectives, digest ", 0), 0u) << line;
  EXPECT_NE(line.find(": _c10d_functional::all_reduce.default group=0 reduce=sum f32; "), std::string::npos) << line;
  // Another reduce op is another schedule; the same entries give the same line.
  auto other = schedule;
  other[0] = "_c10d_functional::all_reduce.default group=0 reduce=max f32";
  EXPECT_NE(collective_schedule_line(other), line);
  EXPECT_EQ(collective_schedule_line(schedule), line);
  EXPECT_EQ(collective_schedule_line({}), "0 collectives, digest cbf29ce484222325");
}

}  // namespace
}  // namespace nrt::exec
