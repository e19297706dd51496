// The sharding registry: one entry per op target (ShardingEntry below), holding its propagation
// rule, the argument the sharding pass rewrites to this rank's local sizes, and how the pass plans
// a node that does not go by a rule (nrt::redistribute, nrt::from_local / nrt::to_local, the
// arg reductions, ops that read only metadata). The targets nrt builds nodes with are in
// dtensor_ops.h.
//
// Sharding propagation rules per op family: given the placements of a node's tensor inputs on
// the mesh, the placements they must run with and those of the output. Rules decide each mesh
// dim on its own. A node without a rule (nullopt) takes the always-correct fallback: every input
// Replicate, the output Replicate.
//
//   elementwise    unary and binary ops, where, clamp, casts: the output keeps the shard of an
//                  input that spans the output dim; inputs broadcast along it stay whole
//   linear, mm,    batch (row) sharding keeps it; a column-sharded weight (Shard(0) of
//   addmm          linear's [N, K] weight, Shard(1) of mm's [K, N]) shards the output's last
//                  dim; sharding the contraction dim gives Partial(sum), the bias then Partial too
//                  (group rank 0 adds it)
//   t, transpose,  move the shard with its dim
//   permute
//   softmax,       keep a shard that is not on the normalized dim
//   log_softmax
//   sum.dim_IntList, amax, amin
//                  over a sharded dim give Partial(sum / max / min); other shards follow their dim
//   view, reshape, _unsafe_view, flatten, unflatten
//                  a dim kept whole keeps its shard; a sharded dim split into factors keeps it
//                  on its first factor, and dims merged keep the shard of the first, when the
//                  mesh dim divides both (their ArgumentRewrite has the pass rewrite the size
//                  argument to local sizes, unflatten's sizes to those of the dims it makes)
//   scaled_dot_product_attention
//                  sharded by batch or heads (dims 0 and 1 of q, k, v); a mask follows
//   layer_norm,    keep a shard on a dim before the normalized ones; weight and bias whole
//   rms_norm
//   slice, select, keep the shards of the other dims (select and unsqueeze move them)
//   unsqueeze, split, chunk, cat, expand
//                  (cat: every listed tensor takes the first one's placements)
//   bmm, matmul    batch dims shard both alike, rows / columns shard the output, the
//                  contraction gives Partial(sum); matmul by a 2-D matrix as mm
//   embedding      sharded indices shard the output alike, a weight sharded on its embedding
//                  dim shards the output's last dim, a vocabulary-sharded weight gives
//                  Partial(sum) by a masked lookup (rule kVocabularyShardedEmbedding)
//   random draws   (rand, randn, randint, normal (every overload), the _like forms, uniform,
//                  bernoulli, normal_functional, dropout, native_dropout, and torch's
//                  _philox_uniform/_normal/_randint):
//                  the output keeps the placements it is declared with (or a sharded input's), the
//                  key stays whole; each rank draws only its shard's elements, from their global
//                  row-major indices, so the assembled tensor is the one-process draw bit for bit
//   _philox_key_split, _philox_key_fold_in
//                  keys derived whole (a key's two words are read together)
//   mean.dim, prod.dim_int, sum.default, mean.default
//                  as sum: Partial(avg / product / sum); a mean over an unevenly sharded dim
//                  is gathered (the mean of shard means would be wrong)
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "executor/dtensor/placement.h"
#include "schema/nrt_generated.h"

namespace nrt::dist {

struct RuleInput {
  Placements placements;
  std::vector<int64_t> global_sizes;
};

struct RuleDecision {
  std::string rule;
  std::vector<Placements> inputs;  // per tensor input, in the order given
  Placements output;
  bool every_output = false;  // every output takes `output` (split, chunk); else only the first
};

// What a rule is asked about one node. `inputs`: the node's tensor arguments in argument order
// (TensorArg and present OptionalTensorArg), never empty; `output_sizes`: the global sizes of its
// first output.
struct RuleQuery {
  const fb::NodeT& node;
  const std::vector<RuleInput>& inputs;
  const std::vector<int64_t>& output_sizes;
  const std::vector<int64_t>& mesh_shape;
};

// A propagation rule; nullopt where it does not apply (argument counts or shapes it does not
// know), and the node takes the fallback.
using Rule = std::optional<RuleDecision> (*)(const RuleQuery&);

// The argument the sharding pass rewrites once the output's placements are known: sizes recorded
// as global become this rank's local ones.
enum class ArgumentRewrite {
  kNone,
  kViewSizes,       // view, reshape, _unsafe_view, draws of a size (rand): `size` / `shape` -> the
                    // output's local sizes
  kExpandSizes,     // expand: `size` -> the output's local sizes
  kUnflattenSizes,  // unflatten: `sizes` -> the local sizes of the dims it makes
};

// How the sharding pass plans a node of the target.
enum class NodePlanning {
  kByRule,        // by its propagation rule, else the fallback
  kMetadataOnly,  // reads only its inputs' metadata: without outputs, it runs on the shards as they are
  kRedistribute,  // the program's own redistribution: planned steps into its declared output
  kFromLocal,     // a rank's local tensor becomes its shard of the output DTensor
  kToLocal,       // a DTensor, in its declared placements, gives this rank's shard
  kArgReduce,     // over a sharded dim, nrt::sharded_arg_reduce's (value, index) exchange
  kDraw,          // a random draw: keeps its output's declared shard (else its rule's), each rank
                  // drawing its own elements by global index (the pass adds their region)
};

// What an arg reduction (NodePlanning::kArgReduce) computes.
struct ArgReduction {
  bool maximum = false;       // argmax, max.dim; else argmin, min.dim
  bool indices_only = false;  // argmax, argmin; else max.dim, min.dim (values, indices)
};

struct ShardingEntry {
  std::string_view target;  // "namespace::name.overload"
  Rule rule = nullptr;      // nullptr: the fallback
  ArgumentRewrite rewrite = ArgumentRewrite::kNone;
  NodePlanning planning = NodePlanning::kByRule;
  bool list_input = false;  // the rule sees the tensors of its one list argument as its inputs (cat)
  ArgReduction arg_reduction = {};
};

// The entry of `target`; nullptr when the registry has none (the node takes the fallback).
const ShardingEntry* sharding_entry(std::string_view target);

// Every entry, in table order.
std::span<const ShardingEntry> sharding_entries();

// Whether `target` goes by the elementwise rule: its output's placements are those of its inputs
// of the output's shape (the sharding pass reads wanted placements back through such ops).
bool keeps_input_placements(std::string_view target);

// The decision of `target`'s rule for `node`; nullopt without a rule, or where it does not apply.
std::optional<RuleDecision> propagate(std::string_view target, const fb::NodeT& node,
                                      const std::vector<RuleInput>& inputs,
                                      const std::vector<int64_t>& output_sizes,
                                      const std::vector<int64_t>& mesh_shape);

// The rule of an embedding whose weight is vocabulary-sharded: the caller runs the lookup as
// nrt::masked_embedding with this rank's first row and the vocabulary size.
inline constexpr const char* kVocabularyShardedEmbedding = "embedding (vocabulary-sharded)";

}  // namespace nrt::dist
