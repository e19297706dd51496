// What the runtime must know about an op beyond its kernel, one entry per target (DESIGN.md,
// "Shape of the runtime"): whether it communicates through the run's process groups, whether
// its completion may be split from its call, whether it draws from the run's seed. A target without an entry has none of these facts.
//
// An entry names one target ("namespace::name.overload"), or a family: every overload of an
// operator, or every op of a namespace, so that a collective the table does not list (a newer
// torch's, or a custom library's) is still bound to its group. Known targets are listed on their
// own even where a family covers them: the table says which ops exist.
#pragma once

#include <span>
#include <string_view>

namespace nrt::exec {

// Which targets an entry speaks for.
enum class OpMatch {
  kTarget,     // exactly `target`
  kOperator,   // `target` is "namespace::name": every overload of it (and the bare name)
  kNamespace,  // `target` is "namespace::": every op in it
};

struct OpFacts {
  std::string_view target;
  OpMatch match = OpMatch::kTarget;
  // Communicates through the run's process groups: its group arguments are bound at load and the
  // executor marks its calls with their node (CollectiveOrigin).
  bool collective = false;
  // May return with its operation in flight (executor/comm/pending_collectives.h); wait_tensor
  // completes it. The plan lets it only where wait_tensor is the sole reader of its output.
  bool defers_wait = false;
  // Completes a collective returned in flight (wait_tensor).
  bool waits = false;
  // Draws random numbers from the run's seed (rand, normal, dropout, ...): the executor gives its
  // kernel the seed and the node's stream (KernelContext::seed, random_stream).
  bool seeded_draw = false;
};

// The keyword arguments the sharding pass gives a seeded or stateless draw that it shards: the
// output's global sizes, and per dim the ranges of the global dim this rank holds (the number of
// ranges, then each range's offset and size). The draw's kernel computes those elements only.
inline constexpr const char* kDrawGlobalSizesArg = "_nrt_global_sizes";
inline constexpr const char* kDrawShardPiecesArg = "_nrt_shard_pieces";

// The entry for `target`: its own, else its operator's, else its namespace's; nullptr when none.
const OpFacts* op_facts(std::string_view target);

// Every entry, in table order.
std::span<const OpFacts> all_op_facts();

}  // namespace nrt::exec
