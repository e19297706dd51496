// The collective schedule ranks compare when each runs its own program: torch's functional
// collectives in order with op, group, reduce op and dtype; waits and sizes left out.
#include <gtest/gtest.h>

#include <cstdlib>

#include <fstream>
#include <sstream>

#include "executor/comm/collective_schedule.h"
#include "executor/dtensor/shard_plan.h"
#include "executor/dtensor/sharded_program.h"
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

// A DTensor program's collectives appear once the sharding pass has run: the redistributions it
// inserts, with their placements, on the mesh's group; the file alone holds none.
TEST(CollectiveSchedule, ShardedProgramsRedistributionsAndGroups) {
  auto file = open_program(runfile("testdata/mlp.nrt"));
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  std::ifstream in(runfile("testdata/sharding/mlp_tp.json"));
  std::stringstream text;
  text << in.rdbuf();
  auto plan = dist::parse_shard_plan(text.str());
  ASSERT_TRUE(plan.ok()) << plan.error().to_string();
  auto dtensor = dist::shard_with_plan(*file, *plan);
  ASSERT_TRUE(dtensor.ok()) << dtensor.error().to_string();
  EXPECT_TRUE(collective_schedule(dtensor->program()).empty());
  EXPECT_EQ(process_groups_line(file->program()), "none");

  auto sharded = dist::shard_program_file(*dtensor, dist::ShardingOptions{0, 2, "", true});
  ASSERT_TRUE(sharded.ok()) << sharded.error().to_string();
  const auto schedule = collective_schedule(sharded->file.program());
  ASSERT_FALSE(schedule.empty());
  for (const std::string& entry : schedule) {
    EXPECT_EQ(entry.rfind("nrt::redistribute_step.default group=mesh 0 dim 0 from=", 0), 0u) << entry;
  }
  EXPECT_NE(schedule.back().find("from=Partial(sum) to=Replicate() f32"), std::string::npos) << schedule.back();
  EXPECT_EQ(process_groups_line(sharded->file.program()), "mesh.tp.0 ranks=[0, 1] mesh=0/0");
  // Rank 1's program communicates alike.
  auto other_rank = dist::shard_program_file(*dtensor, dist::ShardingOptions{1, 2, "", true});
  ASSERT_TRUE(other_rank.ok()) << other_rank.error().to_string();
  EXPECT_EQ(collective_schedule(other_rank->file.program()), schedule);
}

}  // namespace
}  // namespace nrt::exec
