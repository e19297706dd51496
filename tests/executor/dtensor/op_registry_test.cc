// The registries keyed by op target: the sharding registry (executor/dtensor/sharding_rules.h)
// and the runtime's facts about ops (executor/runtime/op_facts.h). One entry per target; the
// facts the sharding pass and the plan builder read come from them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "executor/dtensor/dtensor_ops.h"
#include "executor/dtensor/sharding_rules.h"
#include "executor/runtime/op_facts.h"

namespace nrt {
namespace {

using dist::ArgumentRewrite;
using dist::NodePlanning;
using dist::sharding_entry;
using exec::op_facts;

TEST(ShardingRegistry, OneEntryPerTarget) {
  std::set<std::string_view> seen;
  for (const dist::ShardingEntry& entry : dist::sharding_entries()) {
    EXPECT_TRUE(seen.insert(entry.target).second) << entry.target;
    EXPECT_EQ(sharding_entry(entry.target), &entry) << entry.target;
    // An entry is there for a rule or for the pass's own planning.
    EXPECT_TRUE(entry.rule != nullptr || entry.planning != NodePlanning::kByRule) << entry.target;
  }
}

TEST(ShardingRegistry, EntriesCarryTheirRuleAndRewrite) {
  const dist::ShardingEntry* view = sharding_entry("aten::view.default");
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->rewrite, ArgumentRewrite::kViewSizes);
  EXPECT_EQ(sharding_entry("aten::expand.default")->rewrite, ArgumentRewrite::kExpandSizes);
  EXPECT_EQ(sharding_entry("aten::unflatten.int")->rewrite, ArgumentRewrite::kUnflattenSizes);
  EXPECT_EQ(sharding_entry("aten::add.Tensor")->rewrite, ArgumentRewrite::kNone);

  const dist::ShardingEntry* add = sharding_entry("aten::add.Tensor");
  ASSERT_NE(add, nullptr);
  ASSERT_NE(add->rule, nullptr);
  const fb::NodeT node;
  const std::vector<dist::RuleInput> inputs = {{{dist::Placement::shard(0)}, {8, 4}}};
  const std::vector<int64_t> output_sizes = {8, 4}, mesh_shape = {2};
  auto decision = add->rule(dist::RuleQuery{node, inputs, output_sizes, mesh_shape});
  ASSERT_TRUE(decision);
  EXPECT_EQ(decision->rule, "elementwise");

  EXPECT_TRUE(sharding_entry("aten::cat.default")->list_input);
  EXPECT_FALSE(sharding_entry("aten::add.Tensor")->list_input);
}

TEST(ShardingRegistry, UnknownTargetHasNoRule) {
  EXPECT_EQ(sharding_entry("aten::cumsum.default"), nullptr);
  EXPECT_FALSE(dist::propagate("aten::cumsum.default", fb::NodeT{}, {{{dist::Placement::shard(0)}, {4, 8}}}, {4, 8}, {2}));
}

TEST(ShardingRegistry, OpsThePassPlansItself) {
  EXPECT_EQ(sharding_entry(dist::kRedistributeTarget)->planning, NodePlanning::kRedistribute);
  EXPECT_EQ(sharding_entry(dist::kFromLocalTarget)->planning, NodePlanning::kFromLocal);
  EXPECT_EQ(sharding_entry(dist::kToLocalTarget)->planning, NodePlanning::kToLocal);
  EXPECT_EQ(sharding_entry("aten::_assert_tensor_metadata.default")->planning, NodePlanning::kMetadataOnly);
  const dist::ShardingEntry* argmax = sharding_entry("aten::argmax.default");
  ASSERT_NE(argmax, nullptr);
  EXPECT_EQ(argmax->planning, NodePlanning::kArgReduce);
  EXPECT_TRUE(argmax->arg_reduction.maximum);
  EXPECT_TRUE(argmax->arg_reduction.indices_only);
  const dist::ShardingEntry* min = sharding_entry("aten::min.dim");
  ASSERT_NE(min, nullptr);
  EXPECT_FALSE(min->arg_reduction.maximum);
  EXPECT_FALSE(min->arg_reduction.indices_only);
}

TEST(OpFacts, OneEntryPerTarget) {
  std::set<std::string_view> seen;
  for (const exec::OpFacts& facts : exec::all_op_facts()) {
    EXPECT_TRUE(seen.insert(facts.target).second) << facts.target;
    EXPECT_EQ(op_facts(facts.target), &facts) << facts.target;
  }
}

TEST(OpFacts, CollectivesAndWaits) {
  const exec::OpFacts* all_reduce = op_facts("_c10d_functional::all_reduce.default");
  ASSERT_NE(all_reduce, nullptr);
  EXPECT_TRUE(all_reduce->collective);
  EXPECT_TRUE(all_reduce->defers_wait);
  EXPECT_FALSE(all_reduce->waits);

  const exec::OpFacts* wait = op_facts("_c10d_functional::wait_tensor.default");
  ASSERT_NE(wait, nullptr);
  EXPECT_TRUE(wait->waits);
  EXPECT_TRUE(wait->collective);
  EXPECT_FALSE(wait->defers_wait);

  // In-place collectives write into their input: their wait is not deferred.
  EXPECT_FALSE(op_facts("_c10d_functional::all_reduce_.default")->defers_wait);

  EXPECT_EQ(op_facts("aten::add.Tensor"), nullptr);
}

TEST(OpFacts, FamiliesCoverUnlistedTargets) {
  // A functional collective the table does not list is still one (its group is bound at load).
  const exec::OpFacts* unlisted = op_facts("_c10d_functional::some_future_collective.default");
  ASSERT_NE(unlisted, nullptr);
  EXPECT_TRUE(unlisted->collective);
  EXPECT_FALSE(unlisted->defers_wait);
  EXPECT_FALSE(unlisted->waits);
  // The sharding pass's steps communicate, whatever their overload.
  for (std::string_view target : {dist::kRedistributeStepTarget, dist::kShardedArgReduceTarget}) {
    const exec::OpFacts* facts = op_facts(target);
    ASSERT_NE(facts, nullptr) << target;
    EXPECT_TRUE(facts->collective) << target;
  }
  EXPECT_TRUE(op_facts("nrt::redistribute_step")->collective);
  // Not a family by name prefix alone.
  EXPECT_EQ(op_facts("nrt::redistribute.default"), nullptr);
  EXPECT_EQ(op_facts("_c10d_functional"), nullptr);
}

}  // namespace
}  // namespace nrt
