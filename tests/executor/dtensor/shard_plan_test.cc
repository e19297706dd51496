// executor/dtensor/shard_plan.h's parser: plans that say one thing twice, or more than the
// runtime plans for, are refused naming it (issue 25, class 3).
#include "executor/dtensor/shard_plan.h"

#include <gtest/gtest.h>

#include <string>

namespace nrt::dist {
namespace {

std::string refusal(const std::string& json) {
  auto plan = parse_shard_plan(json);
  if (plan) return "";
  EXPECT_EQ(plan.error().code, ErrorCode::InvalidArgument);
  return plan.error().message;
}

TEST(ShardPlan, AGoodPlanParses) {
  auto plan = parse_shard_plan(R"json({"mesh": {"shape": [2, 2], "dim_names": ["dp", "tp"]},
                                   "modules": {"fc1": "colwise"}, "inputs": {"x": ["Shard(0)", "Replicate()"]}})json");
  ASSERT_TRUE(plan) << plan.error().message;
  EXPECT_EQ(plan->dim_names, (std::vector<std::string>{"dp", "tp"}));
}

TEST(ShardPlan, RepeatedKeysAreRefusedNotOverwritten) {
  EXPECT_EQ(refusal(R"json({"mesh": {"shape": [2]}, "modules": {"fc1": "colwise", "fc1": "rowwise"}})json"),
            "shard plan: key \"fc1\" appears twice in modules");
  EXPECT_EQ(refusal(R"json({"mesh": {"shape": [2]}, "mesh": {"shape": [4]}})json"),
            "shard plan: key \"mesh\" appears twice in the top level");
}

TEST(ShardPlan, RepeatedDimNamesAreRefused) {
  EXPECT_EQ(refusal(R"json({"mesh": {"shape": [2, 1], "dim_names": ["tp", "tp"]}})json"),
            "shard plan: mesh dim_names: \"tp\" names two mesh dims");
}

TEST(ShardPlan, MeshesPastTheLimitsAreRefused) {
  std::string dims = "1";
  for (int i = 1; i < 17; ++i) dims += ", 1";
  EXPECT_EQ(refusal(R"json({"mesh": {"shape": [)json" + dims + "]}}"), "shard plan: the mesh has 17 dims; at most 16 are supported");
  EXPECT_EQ(refusal(R"json({"mesh": {"shape": [1024, 2048]}})json"), "shard plan: the mesh holds more than 2^20 ranks");
  EXPECT_EQ(refusal(R"json({"mesh": )json" + std::string(80, '[') + std::string(80, ']') + "}"),
            "shard plan: nested deeper than 64 levels");
}

}  // namespace
}  // namespace nrt::dist
