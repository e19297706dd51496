// The propagation rules per op family (executor/dtensor/sharding_rules.h), on 1-D and 2-D
// meshes: the placements each input must run with and the output's.
#include <gtest/gtest.h>

#include "executor/dtensor/sharding_rules.h"
#include "executor/dtensor/schema_args.h"

namespace nrt::dist {
namespace {

const Placement R = Placement::replicate();
const Placement P = Placement::partial();
Placement S(int d) { return Placement::shard(d); }

fb::NodeT node_with(std::vector<std::pair<std::string, fb::ArgumentUnion>> args) {
  fb::NodeT node;
  for (auto& [name, arg] : args) node.inputs.push_back(named(name, std::move(arg)));
  return node;
}

std::string show(const std::optional<RuleDecision>& d) {
  if (!d) return "none";
  std::string out = d->rule + ":";
  for (const auto& p : d->inputs) out += " " + to_string(p);
  return out + " -> " + to_string(d->output);
}

const fb::NodeT kNoArgs;

TEST(ShardingRules, ElementwiseKeepsShardsAndBroadcastsWhole) {
  // [8, 4] Shard(0) + [4] (broadcast along dim 0): the bias stays whole.
  auto d = propagate("aten::add.Tensor", kNoArgs, {{{S(0)}, {8, 4}}, {{R}, {4}}}, {8, 4}, {2});
  EXPECT_EQ(show(d), "elementwise: [Shard(0)] [Replicate()] -> [Shard(0)]");
  // A same-shaped replicated operand is cut to the shard (a local chunk, no traffic).
  d = propagate("aten::mul.Tensor", kNoArgs, {{{R}, {8, 4}}, {{S(1)}, {8, 4}}}, {8, 4}, {2});
  EXPECT_EQ(show(d), "elementwise: [Shard(1)] [Shard(1)] -> [Shard(1)]");
  // A Partial input is reduced first (relu of a partial sum is not the partial relu).
  d = propagate("aten::relu.default", kNoArgs, {{{P}, {8}}}, {8}, {2});
  EXPECT_EQ(show(d), "elementwise: [Replicate()] -> [Replicate()]");
  // 2-D: each mesh dim on its own.
  d = propagate("aten::gelu.default", kNoArgs, {{{S(0), S(1)}, {8, 4}}}, {8, 4}, {2, 2});
  EXPECT_EQ(show(d), "elementwise: [Shard(0), Shard(1)] -> [Shard(0), Shard(1)]");
}

TEST(ShardingRules, LinearByRowsColumnsAndContraction) {
  // x [4, 16], weight [32, 16], bias [32].
  auto d = propagate("aten::linear.default", kNoArgs, {{{R}, {4, 16}}, {{S(0)}, {32, 16}}, {{S(0)}, {32}}}, {4, 32}, {2});
  EXPECT_EQ(show(d), "linear: [Replicate()] [Shard(0)] [Shard(0)] -> [Shard(1)]");
  d = propagate("aten::linear.default", kNoArgs, {{{S(1)}, {4, 16}}, {{S(1)}, {32, 16}}, {{R}, {32}}}, {4, 32}, {2});
  EXPECT_EQ(show(d), "linear: [Shard(1)] [Shard(1)] [Partial(sum)] -> [Partial(sum)]");
  d = propagate("aten::linear.default", kNoArgs, {{{S(0)}, {4, 16}}, {{S(0)}, {32, 16}}}, {4, 32}, {2});
  EXPECT_EQ(show(d), "linear: [Shard(0)] [Replicate()] -> [Shard(0)]");
  // A replicated weight is cut along the contraction when x is sharded there.
  d = propagate("aten::linear.default", kNoArgs, {{{S(1)}, {4, 16}}, {{R}, {32, 16}}}, {4, 32}, {2});
  EXPECT_EQ(show(d), "linear: [Shard(1)] [Shard(1)] -> [Partial(sum)]");
  // mm: b [K, N] column-sharded is Shard(1); addmm's bias comes first.
  d = propagate("aten::mm.default", kNoArgs, {{{R}, {4, 16}}, {{S(1)}, {16, 32}}}, {4, 32}, {2});
  EXPECT_EQ(show(d), "mm: [Replicate()] [Shard(1)] -> [Shard(1)]");
  d = propagate("aten::addmm.default", kNoArgs, {{{R}, {32}}, {{R}, {4, 16}}, {{S(0)}, {16, 32}}}, {4, 32}, {2});
  EXPECT_EQ(show(d), "addmm: [Partial(sum)] [Shard(1)] [Shard(0)] -> [Partial(sum)]");
}

TEST(ShardingRules, TransposeSoftmaxAndReductions) {
  auto t = node_with({{"self", {}}, {"dim0", int_arg(1)}, {"dim1", int_arg(2)}});
  EXPECT_EQ(show(propagate("aten::transpose.int", t, {{{S(2)}, {2, 6, 4, 8}}}, {2, 4, 6, 8}, {2})),
            "transpose: [Shard(2)] -> [Shard(1)]");
  EXPECT_EQ(show(propagate("aten::t.default", kNoArgs, {{{S(0), P}, {4, 8}}}, {8, 4}, {2, 2})),
            "transpose: [Shard(0), Partial(sum)] -> [Shard(1), Partial(sum)]");
  auto softmax = node_with({{"self", {}}, {"dim", int_arg(-1)}});
  EXPECT_EQ(show(propagate("aten::_softmax.default", softmax, {{{S(0)}, {4, 8}}}, {4, 8}, {2})),
            "softmax: [Shard(0)] -> [Shard(0)]");
  EXPECT_EQ(show(propagate("aten::_softmax.default", softmax, {{{S(1)}, {4, 8}}}, {4, 8}, {2})),
            "softmax: [Replicate()] -> [Replicate()]");
  auto sum = node_with({{"self", {}}, {"dim", int_list_arg({1})}});
  EXPECT_EQ(show(propagate("aten::sum.dim_IntList", sum, {{{S(1), S(2)}, {4, 8, 6}}}, {4, 6}, {2, 2})),
            "sum: [Shard(1), Shard(2)] -> [Partial(sum), Shard(1)]");
  EXPECT_EQ(show(propagate("aten::amax.default", sum, {{{S(1)}, {4, 8}}}, {4}, {2})),
            "amax/amin: [Shard(1)] -> [Partial(max)]");
}

TEST(ShardingRules, ViewsKeepShardsWhenTheyCan) {
  // Split [2, 6, 32] -> [2, 6, 4, 8]: the shard of dim 2 stays on its first factor (4 heads).
  EXPECT_EQ(show(propagate("aten::view.default", kNoArgs, {{{S(2)}, {2, 6, 32}}}, {2, 6, 4, 8}, {2})),
            "view: [Shard(2)] -> [Shard(2)]");
  // 4 heads do not split over 3 ranks: Replicate.
  EXPECT_EQ(show(propagate("aten::view.default", kNoArgs, {{{S(2)}, {2, 6, 32}}}, {2, 6, 4, 8}, {3})),
            "view: [Replicate()] -> [Replicate()]");
  // Merge [2, 6, 4, 8] -> [2, 6, 32] keeps the shard of the first merged dim; of the second, not.
  EXPECT_EQ(show(propagate("aten::reshape.default", kNoArgs, {{{S(2)}, {2, 6, 4, 8}}}, {2, 6, 32}, {2})),
            "view: [Shard(2)] -> [Shard(2)]");
  EXPECT_EQ(show(propagate("aten::reshape.default", kNoArgs, {{{S(3)}, {2, 6, 4, 8}}}, {2, 6, 32}, {2})),
            "view: [Replicate()] -> [Replicate()]");
  // A dim kept whole keeps an uneven shard; size-1 dims are skipped; Partial passes through.
  EXPECT_EQ(show(propagate("aten::view.default", kNoArgs, {{{S(0), P}, {5, 6}}}, {5, 1, 6}, {3, 2})),
            "view: [Shard(0), Partial(sum)] -> [Shard(0), Partial(sum)]");
  EXPECT_EQ(show(propagate("aten::view.default", kNoArgs, {{{S(1)}, {1, 6}}}, {6}, {2})),
            "view: [Shard(1)] -> [Shard(0)]");
}

TEST(ShardingRules, FlattenAndUnflattenAreReshapes) {
  // [2, 4, 6] Shard(1) flattened over dims 1-2: [2, 24] keeps the shard on the merged dim.
  EXPECT_EQ(show(propagate("aten::flatten.using_ints", kNoArgs, {{{S(1)}, {2, 4, 6}}}, {2, 24}, {2})),
            "flatten: [Shard(1)] -> [Shard(1)]");
  // Merging with a sharded second dim: gathered.
  EXPECT_EQ(show(propagate("aten::flatten.using_ints", kNoArgs, {{{S(2)}, {2, 4, 6}}}, {2, 24}, {2})),
            "flatten: [Replicate()] -> [Replicate()]");
  // [2, 24] Shard(1) unflattened to [2, 4, 6]: the shard on the first factor.
  EXPECT_EQ(show(propagate("aten::unflatten.int", kNoArgs, {{{S(1)}, {2, 24}}}, {2, 4, 6}, {2})),
            "unflatten: [Shard(1)] -> [Shard(1)]");
  // 3 does not divide 4: gathered.
  EXPECT_EQ(show(propagate("aten::unflatten.int", kNoArgs, {{{S(1)}, {2, 24}}}, {2, 4, 6}, {3})),
            "unflatten: [Replicate()] -> [Replicate()]");
}

TEST(ShardingRules, AttentionByBatchOrHeads) {
  const std::vector<int64_t> qkv{2, 4, 6, 8};
  EXPECT_EQ(show(propagate("aten::scaled_dot_product_attention.default", kNoArgs,
                           {{{S(1)}, qkv}, {{S(1)}, qkv}, {{R}, qkv}}, qkv, {2})),
            "attention: [Shard(1)] [Shard(1)] [Shard(1)] -> [Shard(1)]");
  // A mask [6, 6] broadcasts over batch and heads: whole.
  EXPECT_EQ(show(propagate("aten::scaled_dot_product_attention.default", kNoArgs,
                           {{{S(0)}, qkv}, {{S(0)}, qkv}, {{S(0)}, qkv}, {{R}, {6, 6}}}, qkv, {2})),
            "attention: [Shard(0)] [Shard(0)] [Shard(0)] [Replicate()] -> [Shard(0)]");
  // Sharded along the sequence: no rule for that, everything whole.
  EXPECT_EQ(show(propagate("aten::scaled_dot_product_attention.default", kNoArgs,
                           {{{S(2)}, qkv}, {{S(2)}, qkv}, {{S(2)}, qkv}}, qkv, {2})),
            "attention: [Replicate()] [Replicate()] [Replicate()] -> [Replicate()]");
}

TEST(ShardingRules, NormsKeepShardsBeforeTheNormalizedDims) {
  auto ln = node_with({{"input", {}}, {"normalized_shape", int_list_arg({8})}});
  // [2, 6, 8]: sharded by batch or sequence it stays; on the normalized dim it is gathered.
  EXPECT_EQ(show(propagate("aten::layer_norm.default", ln, {{{S(1)}, {2, 6, 8}}, {{R}, {8}}, {{R}, {8}}}, {2, 6, 8}, {2})),
            "layer_norm: [Shard(1)] [Replicate()] [Replicate()] -> [Shard(1)]");
  EXPECT_EQ(show(propagate("aten::layer_norm.default", ln, {{{S(2)}, {2, 6, 8}}, {{S(0)}, {8}}}, {2, 6, 8}, {2})),
            "layer_norm: [Replicate()] [Replicate()] -> [Replicate()]");
  auto rms = node_with({{"input", {}}, {"normalized_shape", int_list_arg({6, 8})}});
  EXPECT_EQ(show(propagate("aten::rms_norm.default", rms, {{{S(0), S(1)}, {2, 6, 8}}}, {2, 6, 8}, {2, 2})),
            "rms_norm: [Shard(0), Replicate()] -> [Shard(0), Replicate()]");
  // Partial input: reduced first.
  EXPECT_EQ(show(propagate("aten::rms_norm.default", rms, {{{P}, {2, 6, 8}}}, {2, 6, 8}, {2})),
            "rms_norm: [Replicate()] -> [Replicate()]");
  // Without its normalized_shape, no rule.
  EXPECT_FALSE(propagate("aten::layer_norm.default", kNoArgs, {{{S(0)}, {4, 8}}}, {4, 8}, {2}));
}

TEST(ShardingRules, SliceSelectUnsqueezeExpandSplitAndCat) {
  auto slice = node_with({{"self", {}}, {"dim", int_arg(1)}, {"start", int_arg(0)}, {"end", int_arg(2)}});
  EXPECT_EQ(show(propagate("aten::slice.Tensor", slice, {{{S(0), S(1)}, {4, 8}}}, {4, 2}, {2, 2})),
            "slice: [Shard(0), Replicate()] -> [Shard(0), Replicate()]");
  auto select = node_with({{"self", {}}, {"dim", int_arg(0)}, {"index", int_arg(1)}});
  EXPECT_EQ(show(propagate("aten::select.int", select, {{{S(2)}, {3, 4, 8}}}, {4, 8}, {2})),
            "select: [Shard(2)] -> [Shard(1)]");
  EXPECT_EQ(show(propagate("aten::select.int", select, {{{S(0)}, {3, 4, 8}}}, {4, 8}, {2})),
            "select: [Replicate()] -> [Replicate()]");
  auto unsqueeze = node_with({{"self", {}}, {"dim", int_arg(-1)}});
  EXPECT_EQ(show(propagate("aten::unsqueeze.default", unsqueeze, {{{S(1)}, {4, 8}}}, {4, 8, 1}, {2})),
            "unsqueeze: [Shard(1)] -> [Shard(1)]");
  auto front = node_with({{"self", {}}, {"dim", int_arg(0)}});
  EXPECT_EQ(show(propagate("aten::unsqueeze.default", front, {{{S(1)}, {4, 8}}}, {1, 4, 8}, {2})),
            "unsqueeze: [Shard(1)] -> [Shard(2)]");
  auto split = node_with({{"self", {}}, {"split_size", int_arg(4)}, {"dim", int_arg(-1)}});
  EXPECT_EQ(show(propagate("aten::split.Tensor", split, {{{S(0)}, {6, 12}}}, {6, 4}, {2})),
            "split: [Shard(0)] -> [Shard(0)]");
  // Every output of a split takes the placements; a slice's one output is the only one.
  EXPECT_TRUE(propagate("aten::split.Tensor", split, {{{S(0)}, {6, 12}}}, {6, 4}, {2})->every_output);
  EXPECT_FALSE(propagate("aten::slice.Tensor", slice, {{{S(0), S(1)}, {4, 8}}}, {4, 2}, {2, 2})->every_output);
  EXPECT_EQ(show(propagate("aten::split.Tensor", split, {{{S(1)}, {6, 12}}}, {6, 4}, {2})),
            "split: [Replicate()] -> [Replicate()]");
  // expand: GQA's kv heads [2, 2, 1, 8, 4] -> [2, 2, 3, 8, 4] keep their shard; a broadcast dim has none.
  EXPECT_EQ(show(propagate("aten::expand.default", kNoArgs, {{{S(1)}, {2, 2, 1, 8, 4}}}, {2, 2, 3, 8, 4}, {2})),
            "expand: [Shard(1)] -> [Shard(1)]");
  EXPECT_EQ(show(propagate("aten::expand.default", kNoArgs, {{{S(0)}, {4, 8}}}, {3, 4, 8}, {2})),
            "expand: [Shard(0)] -> [Shard(1)]");
  EXPECT_EQ(show(propagate("aten::expand.default", kNoArgs, {{{S(2)}, {2, 2, 1, 8, 4}}}, {2, 2, 3, 8, 4}, {2})),
            "expand: [Replicate()] -> [Replicate()]");
  auto cat = node_with({{"tensors", {}}, {"dim", int_arg(1)}});
  // Every listed tensor takes the first one's placements; the cat dim is gathered.
  EXPECT_EQ(show(propagate("aten::cat.default", cat, {{{S(0)}, {4, 8}}, {{R}, {4, 2}}}, {4, 10}, {2})),
            "cat: [Shard(0)] [Shard(0)] -> [Shard(0)]");
  EXPECT_EQ(show(propagate("aten::cat.default", cat, {{{S(1)}, {4, 8}}, {{S(1)}, {4, 2}}}, {4, 10}, {2})),
            "cat: [Replicate()] [Replicate()] -> [Replicate()]");
}

TEST(ShardingRules, BatchedMatmulByBatchRowsColumnsAndContraction) {
  // a [2, 4, 16] @ b [2, 16, 8].
  const RuleInput a_batch{{S(0)}, {2, 4, 16}}, b_whole{{R}, {2, 16, 8}};
  EXPECT_EQ(show(propagate("aten::bmm.default", kNoArgs, {a_batch, b_whole}, {2, 4, 8}, {2})),
            "bmm: [Shard(0)] [Shard(0)] -> [Shard(0)]");
  EXPECT_EQ(show(propagate("aten::bmm.default", kNoArgs, {{{S(1)}, {2, 4, 16}}, b_whole}, {2, 4, 8}, {2})),
            "bmm: [Shard(1)] [Replicate()] -> [Shard(1)]");
  EXPECT_EQ(show(propagate("aten::bmm.default", kNoArgs, {{{R}, {2, 4, 16}}, {{S(2)}, {2, 16, 8}}}, {2, 4, 8}, {2})),
            "bmm: [Replicate()] [Shard(2)] -> [Shard(2)]");
  EXPECT_EQ(show(propagate("aten::matmul.default", kNoArgs, {{{S(2)}, {2, 4, 16}}, b_whole}, {2, 4, 8}, {2})),
            "matmul: [Shard(2)] [Shard(1)] -> [Partial(sum)]");
  // matmul by a 2-D matrix: as mm, batch rows kept.
  EXPECT_EQ(show(propagate("aten::matmul.default", kNoArgs, {{{S(1)}, {2, 4, 16}}, {{S(1)}, {16, 8}}}, {2, 4, 8}, {2})),
            "matmul: [Shard(1)] [Replicate()] -> [Shard(1)]");
  // Broadcast batch dims: no rule.
  EXPECT_FALSE(propagate("aten::matmul.default", kNoArgs, {{{S(0)}, {2, 4, 16}}, {{R}, {1, 16, 8}}}, {2, 4, 8}, {2}));
}

TEST(ShardingRules, EmbeddingByIndicesColumnsOrVocabulary) {
  const RuleInput indices{{R}, {3, 5}};
  EXPECT_EQ(show(propagate("aten::embedding.default", kNoArgs, {{{S(0)}, {64, 16}}, indices}, {3, 5, 16}, {2})),
            std::string(kVocabularyShardedEmbedding) + ": [Shard(0)] [Replicate()] -> [Partial(sum)]");
  EXPECT_EQ(show(propagate("aten::embedding.default", kNoArgs, {{{S(1)}, {64, 16}}, indices}, {3, 5, 16}, {2})),
            "embedding: [Shard(1)] [Replicate()] -> [Shard(2)]");
  EXPECT_EQ(show(propagate("aten::embedding.default", kNoArgs, {{{S(0)}, {64, 16}}, {{S(0)}, {3, 5}}}, {3, 5, 16}, {2})),
            "embedding: [Replicate()] [Shard(0)] -> [Shard(0)]");
  // dp x tp: batch-sharded indices on dp, the vocabulary on tp.
  EXPECT_EQ(show(propagate("aten::embedding.default", kNoArgs, {{{R, S(0)}, {64, 16}}, {{S(0), R}, {3, 5}}}, {3, 5, 16},
                           {2, 2})),
            std::string(kVocabularyShardedEmbedding) + ": [Replicate(), Shard(0)] [Shard(0), Replicate()] -> [Shard(0), Partial(sum)]");
}

TEST(ShardingRules, MeanProdAndWholeSums) {
  auto mean = node_with({{"self", {}}, {"dim", int_list_arg({1})}, {"keepdim", bool_arg(true)}});
  EXPECT_EQ(show(propagate("aten::mean.dim", mean, {{{S(1)}, {4, 8}}}, {4, 1}, {2})),
            "mean: [Shard(1)] -> [Partial(avg)]");
  // 7 over 2 shards: 4 and 3 elements, the mean of means is not the mean: gathered.
  EXPECT_EQ(show(propagate("aten::mean.dim", mean, {{{S(1)}, {4, 7}}}, {4, 1}, {2})),
            "mean: [Replicate()] -> [Replicate()]");
  auto prod = node_with({{"self", {}}, {"dim", int_arg(0)}});
  EXPECT_EQ(show(propagate("aten::prod.dim_int", prod, {{{S(0), S(1)}, {4, 8}}}, {8}, {2, 2})),
            "prod: [Shard(0), Shard(1)] -> [Partial(product), Shard(0)]");
  EXPECT_EQ(show(propagate("aten::sum.default", kNoArgs, {{{S(1)}, {4, 8}}}, {}, {2})),
            "sum: [Shard(1)] -> [Partial(sum)]");
}

TEST(ShardingRules, ShapesAnOpCannotHaveGetNoRuleNotACrash) {
  // The file's metadata is not checked against the op (the dtensor_program_fuzzer's finding):
  // a linear whose output has no dims, a 1-D weight, dims outside the tensor, an expand that drops dims.
  EXPECT_FALSE(propagate("aten::linear.default", kNoArgs, {{{S(0)}, {4, 16}}, {{R}, {32, 16}}}, {}, {2}));
  EXPECT_FALSE(propagate("aten::mm.default", kNoArgs, {{{S(0)}, {4, 16}}, {{R}, {16}}}, {4, 16}, {2}));
  EXPECT_FALSE(propagate("aten::addmm.default", kNoArgs, {{{R}, {4}}, {{S(0)}, {4}}, {{R}, {4, 4}}}, {4, 4}, {2}));
  auto t = node_with({{"self", {}}, {"dim0", int_arg(5)}, {"dim1", int_arg(0)}});
  EXPECT_FALSE(propagate("aten::transpose.int", t, {{{S(0)}, {4, 8}}}, {8, 4}, {2}));
  auto perm = node_with({{"self", {}}, {"dims", int_list_arg({0, 7})}});
  EXPECT_FALSE(propagate("aten::permute.default", perm, {{{S(0)}, {4, 8}}}, {8, 4}, {2}));
  EXPECT_FALSE(propagate("aten::expand.default", kNoArgs, {{{S(1)}, {4, 8}}}, {8}, {2}));
  // Elementwise with an input of more dims than the output: that input's shard is not followed.
  EXPECT_EQ(show(propagate("aten::add.Tensor", kNoArgs, {{{S(0)}, {2, 4, 8}}, {{R}, {8}}}, {8}, {2})),
            "elementwise: [Replicate()] [Replicate()] -> [Replicate()]");
  // A reshape whose sizes overflow when multiplied: no rule.
  EXPECT_FALSE(propagate("aten::view.default", kNoArgs, {{{S(0)}, {int64_t{1} << 40, int64_t{1} << 40}}},
                         {int64_t{1} << 41, int64_t{1} << 39}, {2}));
}

TEST(ShardingRules, OpsWithoutARuleGetNone) {
  EXPECT_FALSE(propagate("aten::cumsum.default", kNoArgs, {{{S(0)}, {4, 8}}}, {4, 8}, {2}));
  EXPECT_FALSE(propagate("aten::sort.default", kNoArgs, {{{S(0)}, {4, 8}}}, {4, 8}, {2}));
}

}  // namespace
}  // namespace nrt::dist
