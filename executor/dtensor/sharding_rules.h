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
//                  mesh dim divides both (the caller rewrites the size argument to local sizes,
//                  unflatten's sizes to those of the dims it makes)
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
//   mean.dim, prod.dim_int, sum.default, mean.default
//                  as sum: Partial(avg / product / sum); a mean over an unevenly sharded dim
//                  is gathered (the mean of shard means would be wrong)
#pragma once

#include <optional>
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

// `inputs`: the node's tensor arguments in argument order (TensorArg and present
// OptionalTensorArg); `output_sizes`: the global sizes of its first output.
std::optional<RuleDecision> propagate(std::string_view target, const fb::NodeT& node,
                                      const std::vector<RuleInput>& inputs,
                                      const std::vector<int64_t>& output_sizes,
                                      const std::vector<int64_t>& mesh_shape);

// The rule of an embedding whose weight is vocabulary-sharded: the caller runs the lookup as
// nrt::masked_embedding with this rank's first row and the vocabulary size.
inline constexpr const char* kVocabularyShardedEmbedding = "embedding (vocabulary-sharded)";

// view, reshape, _unsafe_view.
bool is_view_like(std::string_view target);

// Targets whose size argument the caller must rewrite to the output's local sizes (the views,
// expand).
bool has_size_argument(std::string_view target);

}  // namespace nrt::dist
