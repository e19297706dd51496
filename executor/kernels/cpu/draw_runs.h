// Which elements of a draw a kernel computes. A draw's values are a function of the global
// row-major element index (docs/RANDOM.md), so a rank holding a shard draws only its own
// elements: the sharding pass gives such a node the global sizes and, per dim, the ranges of
// the global dim this rank's shard holds (kDrawGlobalSizesArg and kDrawShardPiecesArg,
// executor/runtime/op_facts.h). A node without them draws the whole output.
#pragma once

#include <cstdint>
#include <vector>

#include "executor/runtime/kernel.h"
#include "executor/runtime/op_facts.h"

namespace nrt::exec::cpu {

// `count` consecutive elements of the global draw from `global_first`, stored at local
// (row-major) element `local_first` onwards.
struct DrawRun {
  int64_t global_first = 0;
  int64_t count = 0;
  int64_t local_first = 0;
};

// The runs of an output of `local_sizes`: one run of every element when the node is not a sharded
// draw; the shard's rows otherwise (checked against the local sizes).
Result<std::vector<DrawRun>> draw_runs(const KernelContext& ctx, const std::vector<int64_t>& local_sizes);

}  // namespace nrt::exec::cpu
