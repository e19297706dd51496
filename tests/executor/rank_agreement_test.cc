// The ranks' comparison before the first collective: who differs, named by rank.
#include <gtest/gtest.h>

#include "executor/comm/rank_agreement.h"

namespace nrt::exec {
namespace {

TEST(RankAgreement, AllEqualIsAgreement) {
  EXPECT_FALSE(rank_disagreement({}, "program"));
  EXPECT_FALSE(rank_disagreement({"a"}, "program"));
  EXPECT_FALSE(rank_disagreement({"a", "a", "a"}, "program"));
}

TEST(RankAgreement, TwoGroupsNameTheRanksApartFromRankZero) {
  EXPECT_EQ(rank_disagreement({"a", "b"}, "program").value_or(""),
            "ranks [1] hold a different program than ranks [0]: b vs a");
  EXPECT_EQ(rank_disagreement({"b", "a", "b", "a"}, "program").value_or(""),
            "ranks [1, 3] hold a different program than ranks [0, 2]: a vs b");
}

TEST(RankAgreement, MoreGroupsListEach) {
  EXPECT_EQ(rank_disagreement({"a", "b", "a", "c"}, "program").value_or(""),
            "ranks hold 3 different programs: ranks [0, 2]: a; ranks [1]: b; ranks [3]: c");
}

}  // namespace
}  // namespace nrt::exec
