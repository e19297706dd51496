// Grouped-query attention's repeated keys and values (executor/runtime/repeated_kv_fusion.h)
// through the executor with the CPU kernels: the attention reads the key/value heads where they
// are, with enable_gqa, and gives the bits of the nodes run apart (the unfused program makes the
// repeated key a graph output, which the fusion must respect), for contiguous heads, a key and a
// value that are transposed views and a boolean mask; keys and values repeated by different groups, an
// attention already given enable_gqa and a write in place between the repeat and the attention
// leave the nodes as they are.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"
#include "tests/executor/fused_and_apart.h"
#include "tests/executor/load_program.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::NamedInputs;
using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

constexpr int64_t kHeads = 4, kPositions = 6, kDepth = 8;

struct Chain {
  int64_t key_heads = 2, value_heads = 2;  // each repeated to kHeads
  bool key_transposed = false;             // key a head of [1, positions, heads, depth]: rows apart
  bool value_transposed = false;           // value read from [1, positions, heads, depth]
  bool masked = false;                     // a bool attn_mask [positions, positions]
  bool gqa_given = false;                  // enable_gqa=True on the repeated heads: not fused
  bool write_between = false;              // key.mul_(2) after its repeat: not fused
  bool repeat_is_output = false;           // the repeated key is a graph output too: not fused
};

// x [1, heads, positions, depth] -> [1, kHeads, positions, depth] as repeat_kv writes it.
uint32_t repeat(testdata::GraphBuilder& g, ProgramBuilder& p, uint32_t x, int64_t heads, const std::string& name) {
  const auto f32 = ScalarType::FLOAT32;
  const int64_t group = kHeads / heads;
  const uint32_t u = g.tensor(name + "_u", f32, {1, heads, 1, kPositions, kDepth});
  const uint32_t e = g.tensor(name + "_e", f32, {1, heads, group, kPositions, kDepth});
  const uint32_t r = g.tensor(name + "_r", f32, {1, kHeads, kPositions, kDepth});
  g.node(name + "_u", p.op("aten::unsqueeze", "default"), Args{{"self", arg::tensor(x)}, {"dim", arg::integer(2)}}, {},
         {arg::tensor(u)});
  g.node(name + "_e", p.op("aten::expand", "default"),
         Args{{"self", arg::tensor(u)}, {"size", arg::integers({1, heads, group, kPositions, kDepth})}}, {}, {arg::tensor(e)});
  g.node(name + "_r", p.op("aten::reshape", "default"),
         Args{{"self", arg::tensor(e)}, {"shape", arg::integers({1, kHeads, kPositions, kDepth})}}, {}, {arg::tensor(r)});
  return r;
}

ProgramWithWeights chain_program(const Chain& c) {
  ProgramBuilder p("repeated_kv_fusion_test");
  const auto f32 = ScalarType::FLOAT32;
  auto g = p.graph("main", true);
  const uint32_t q = g.tensor("q", f32, {1, kHeads, kPositions, kDepth});
  const std::vector<int64_t> key_sizes = c.key_transposed ? std::vector<int64_t>{1, kPositions, c.key_heads, kDepth}
                                                          : std::vector<int64_t>{1, c.key_heads, kPositions, kDepth};
  const uint32_t k_in = g.tensor("k_in", f32, key_sizes);
  g.user_input(arg::tensor(q));
  g.user_input(arg::tensor(k_in));
  // k = k_in * k_in: a value of the plan (a graph input cannot be written in place)
  uint32_t k = g.tensor("k", f32, key_sizes);
  g.node("k", p.op("aten::mul", "Tensor"), Args{{"self", arg::tensor(k_in)}, {"other", arg::tensor(k_in)}}, {}, {arg::tensor(k)});
  if (c.key_transposed) {
    const uint32_t heads = g.tensor("k_heads", f32, {1, c.key_heads, kPositions, kDepth});
    g.node("k_heads", p.op("aten::transpose", "int"), Args{{"self", arg::tensor(k)}, {"dim0", arg::integer(1)}, {"dim1", arg::integer(2)}},
           {}, {arg::tensor(heads)});
    k = heads;
  }
  uint32_t v;
  if (c.value_transposed) {
    const uint32_t rows = g.tensor("v_rows", f32, {1, kPositions, c.value_heads, kDepth});
    g.user_input(arg::tensor(rows));
    v = g.tensor("v", f32, {1, c.value_heads, kPositions, kDepth});
    g.node("v", p.op("aten::transpose", "int"), Args{{"self", arg::tensor(rows)}, {"dim0", arg::integer(1)}, {"dim1", arg::integer(2)}},
           {}, {arg::tensor(v)});
  } else {
    v = g.tensor("v", f32, {1, c.value_heads, kPositions, kDepth});
    g.user_input(arg::tensor(v));
  }
  uint32_t mask = 0;
  if (c.masked) {
    mask = g.tensor("mask", ScalarType::BOOL, {kPositions, kPositions});
    g.user_input(arg::tensor(mask));
  }
  const uint32_t rk = repeat(g, p, k, c.key_heads, "key"), rv = repeat(g, p, v, c.value_heads, "value");
  // A value made between the repeats and the attention, of k's size: the plan would give it k's
  // memory were k's life to end at its repeat.
  const uint32_t other = g.tensor("other", f32, key_sizes);
  g.node("other", p.op("aten::add", "Tensor"), Args{{"self", arg::tensor(k_in)}, {"other", arg::tensor(k_in)}}, {},
         {arg::tensor(other)});
  uint32_t doubled = 0;
  if (c.write_between) {
    doubled = g.tensor("doubled", f32, {1, c.key_heads, kPositions, kDepth});
    g.node("doubled", p.op("aten::mul_", "Scalar"), Args{{"self", arg::tensor(k)}, {"other", arg::real(2.0)}}, {},
           {arg::tensor(doubled)});
  }
  const uint32_t out = g.tensor("out", f32, {1, kHeads, kPositions, kDepth});
  Args args{{"query", arg::tensor(q)}, {"key", arg::tensor(rk)}, {"value", arg::tensor(rv)}};
  if (c.masked) args.push_back({"attn_mask", arg::tensor(mask)});
  args.push_back({"scale", arg::real(0.3)});
  if (c.gqa_given) args.push_back({"enable_gqa", arg::boolean(true)});
  g.node("out", p.op("aten::scaled_dot_product_attention", "default"), args, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  g.user_output(arg::tensor(other));
  if (c.write_between) g.user_output(arg::tensor(doubled));
  if (c.repeat_is_output) g.user_output(arg::tensor(rk));
  return p.finish();
}

exec::Tensor input(const std::vector<int64_t>& sizes, int seed) { return sine_f32(sizes, 0.41, seed, 1.0); }

// A repeat's reshape does nothing: it was fused.
bool fused(const Executor& e) {
  for (const auto& node : e.plan().nodes) {
    if (node.target == "aten::reshape.default" && node.arg_slots.empty()) return true;
  }
  return false;
}

// Runs `c` fused and apart: the same bits. Returns whether it fused.
bool check_chain(const Chain& c, const std::string& label) {
  auto one = load_program(chain_program(c));
  Chain apart = c;
  apart.repeat_is_output = true;
  auto unfused = load_program(chain_program(apart));
  if (one == nullptr || unfused == nullptr) return false;
  EXPECT_FALSE(fused(*unfused)) << label << ": a graph output inside the chain must not be fused away";
  const std::vector<int64_t> key_sizes = c.key_transposed ? std::vector<int64_t>{1, kPositions, c.key_heads, kDepth}
                                                          : std::vector<int64_t>{1, c.key_heads, kPositions, kDepth};
  NamedInputs inputs{{"q", input({1, kHeads, kPositions, kDepth}, 1)}, {"k_in", input(key_sizes, 2)}};
  if (c.value_transposed) {
    inputs.emplace("v_rows", input({1, kPositions, c.value_heads, kDepth}, 3));
  } else {
    inputs.emplace("v", input({1, c.value_heads, kPositions, kDepth}, 3));
  }
  if (c.masked) inputs.emplace("mask", causal_bool_mask(kPositions));
  if (!same_bits_as_apart(*one, *unfused, inputs, label)) return false;
  return fused(*one);
}

TEST(RepeatedKeyValueFusion, FusedAttentionGivesTheBitsOfTheNodesRunApart) {
  EXPECT_TRUE(check_chain(Chain{}, "two key/value heads for four query heads"));
  Chain strided;
  strided.value_transposed = true;
  strided.masked = true;
  EXPECT_TRUE(check_chain(strided, "a transposed value and a mask"));
  // The attention transposes the key's rows, 2 * 8 floats apart, where the repeat's copy made them
  // contiguous.
  Chain key_rows_apart;
  key_rows_apart.key_transposed = true;
  EXPECT_TRUE(check_chain(key_rows_apart, "a key whose rows are apart"));
  Chain one_head;
  one_head.key_heads = one_head.value_heads = 1;
  EXPECT_TRUE(check_chain(one_head, "one key/value head"));
}

TEST(RepeatedKeyValueFusion, OtherAttentionsAreLeftAsTheyAre) {
  Chain groups;
  groups.value_heads = 1;
  EXPECT_FALSE(check_chain(groups, "keys and values repeated by different groups"));
  Chain given;
  given.gqa_given = true;
  EXPECT_FALSE(check_chain(given, "enable_gqa already given"));
  // Fused, the attention would read the key after the write.
  Chain written;
  written.write_between = true;
  EXPECT_FALSE(check_chain(written, "the key written in place before the attention"));
}

}  // namespace
}  // namespace nrt::testing
