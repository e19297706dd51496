#include "executor/runtime/op_facts.h"

#include "serializer/schema_access.h"

namespace nrt::exec {
namespace {

constexpr OpFacts kOpFacts[] = {
    // torch's functional collectives: those returning one fresh tensor may defer their wait.
    {.target = "_c10d_functional::", .match = OpMatch::kNamespace, .collective = true},
    {.target = "_c10d_functional::all_reduce.default", .collective = true, .defers_wait = true},
    {.target = "_c10d_functional::all_reduce_.default", .collective = true},
    {.target = "_c10d_functional::all_reduce_coalesced.default", .collective = true},
    {.target = "_c10d_functional::all_reduce_coalesced_.default", .collective = true},
    {.target = "_c10d_functional::all_gather_into_tensor.default", .collective = true, .defers_wait = true},
    {.target = "_c10d_functional::all_gather_into_tensor_coalesced.default", .collective = true},
    {.target = "_c10d_functional::reduce_scatter_tensor.default", .collective = true, .defers_wait = true},
    {.target = "_c10d_functional::reduce_scatter_tensor_coalesced.default", .collective = true},
    {.target = "_c10d_functional::all_to_all_single.default", .collective = true, .defers_wait = true},
    {.target = "_c10d_functional::broadcast.default", .collective = true, .defers_wait = true},
    {.target = "_c10d_functional::broadcast_.default", .collective = true},
    {.target = "_c10d_functional::wait_tensor.default", .collective = true, .waits = true},
    // The sharding pass's own communicating nodes (executor/dtensor/dtensor_ops.h).
    {.target = "nrt::redistribute_step", .match = OpMatch::kOperator, .collective = true},
    {.target = "nrt::sharded_arg_reduce", .match = OpMatch::kOperator, .collective = true},
    // Stateful draws, seeded per run and node (docs/RANDOM.md); torch's stateless _philox_* ops
    // take their key as an argument instead.
    {.target = "aten::rand", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::randn", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::rand_like", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::randn_like", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::randint", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::randint_like", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::normal", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::normal_", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::normal_functional", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::uniform", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::uniform_", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::bernoulli", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::bernoulli_", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::dropout", .match = OpMatch::kOperator, .seeded_draw = true},
    {.target = "aten::native_dropout", .match = OpMatch::kOperator, .seeded_draw = true},
};

std::string_view namespace_of(std::string_view target) {
  const size_t ns = target.find("::");
  return ns == std::string_view::npos ? std::string_view() : target.substr(0, ns + 2);
}

const OpFacts* find(OpMatch match, std::string_view key) {
  if (key.empty()) return nullptr;
  for (const OpFacts& facts : kOpFacts) {
    if (facts.match == match && facts.target == key) return &facts;
  }
  return nullptr;
}

}  // namespace

const OpFacts* op_facts(std::string_view target) {
  if (const OpFacts* own = find(OpMatch::kTarget, target)) return own;
  if (const OpFacts* op = find(OpMatch::kOperator, split_operator_target(target).name)) return op;
  return find(OpMatch::kNamespace, namespace_of(target));
}

std::span<const OpFacts> all_op_facts() { return kOpFacts; }

}  // namespace nrt::exec
