// executor/comm/rank_world.h under mpirun (linked into mpi_process_group_test_bin, which
// mpi_process_group_test.sh runs with 2 and 3 ranks): joining, agreeing on failures and programs,
// gathering texts. Every rank asserts the same answers.
#include "executor/comm/rank_world.h"

#include <gtest/gtest.h>

#include "executor/comm/mpi_process_group.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace nrt::testing {
namespace {

using nrt::ScalarType;
namespace arg = testdata::arg;
using testdata::Args;

// y = x + c * alpha: programs with different `alpha` differ by one constant.
ProgramFile add_program(double alpha) {
  testdata::ProgramBuilder p("rank_world_test");
  const uint32_t add = p.op("aten::add", "Tensor");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t y = g.tensor("y", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  g.node("add", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, Args{{"alpha", arg::real(alpha)}},
         {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  auto file = verify_in_memory(p.finish());
  EXPECT_TRUE(file.ok()) << file.error().to_string();
  return std::move(*file);
}

class RankWorldTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto world = exec::join_rank_world("rank world test");
    ASSERT_TRUE(world.ok()) << world.error().to_string();
    world_ = std::move(*world);
  }
  exec::RankWorld world_;
};

TEST_F(RankWorldTest, JoinsTheLaunchersWorld) {
  auto mpi = exec::mpi_world();
  ASSERT_TRUE(mpi.ok());
  EXPECT_TRUE(world_.launched());
  EXPECT_FALSE(world_.launcher.empty());
  EXPECT_EQ(world_.rank, mpi->rank);
  EXPECT_EQ(world_.size, mpi->size);
  EXPECT_GE(world_.size, 2);
}

TEST_F(RankWorldTest, EveryRankLearnsWhichRanksFailed) {
  auto none = exec::failed_stage(world_, true, "loading");
  ASSERT_TRUE(none.ok()) << none.error().to_string();
  EXPECT_FALSE(none->has_value());
  auto one = exec::failed_stage(world_, world_.rank != 1, "loading");
  ASSERT_TRUE(one.ok()) << one.error().to_string();
  ASSERT_TRUE(one->has_value()) << "every rank learns that rank 1 failed";
  EXPECT_EQ((*one)->message, "not running: rank 1 failed loading");
  auto failed = world_.failed_ranks(world_.rank == 0);
  ASSERT_TRUE(failed.ok());
  std::vector<int> expected;
  for (int r = 1; r < world_.size; ++r) expected.push_back(r);
  EXPECT_EQ(*failed, expected);
}

TEST_F(RankWorldTest, GathersTextsOfAnyLengthInRankOrder) {
  auto texts = world_.gather_texts(std::string(static_cast<size_t>(world_.rank) * 3, 'a' + static_cast<char>(world_.rank)));
  ASSERT_TRUE(texts.ok()) << texts.error().to_string();
  ASSERT_EQ(texts->size(), static_cast<size_t>(world_.size));
  for (int r = 0; r < world_.size; ++r) {
    EXPECT_EQ((*texts)[static_cast<size_t>(r)], std::string(static_cast<size_t>(r) * 3, 'a' + static_cast<char>(r)));
  }
}

TEST_F(RankWorldTest, RanksHoldingProgramsOneConstantApartAreNamed) {
  const ProgramFile same = add_program(1.0);
  auto agree = exec::program_mismatch(world_, same.program(), false);
  ASSERT_TRUE(agree.ok()) << agree.error().to_string();
  EXPECT_FALSE(agree->has_value());

  const ProgramFile mine = add_program(world_.rank == 1 ? 2.0 : 1.0);
  auto differ = exec::program_mismatch(world_, mine.program(), false);
  ASSERT_TRUE(differ.ok()) << differ.error().to_string();
  ASSERT_TRUE(differ->has_value());
  EXPECT_EQ((*differ)->code, ErrorCode::RankMismatch);
  EXPECT_NE((*differ)->message.find("ranks [1] hold a different program than ranks [0"), std::string::npos)
      << (*differ)->message;
  // Per-rank programs may differ in constants: only their collective schedules (none) are compared.
  auto schedules = exec::program_mismatch(world_, mine.program(), true);
  ASSERT_TRUE(schedules.ok());
  EXPECT_FALSE(schedules->has_value());
}

TEST(RankWorldText, WithRankReplacesEveryPlaceholder) {
  EXPECT_EQ(exec::with_rank("out_{rank}/x_{rank}.npy", 3), "out_3/x_3.npy");
  EXPECT_EQ(exec::with_rank("plain", 3), "plain");
  EXPECT_EQ(exec::rank_list({0, 2, 3}), "0, 2, 3");
}

}  // namespace
}  // namespace nrt::testing
