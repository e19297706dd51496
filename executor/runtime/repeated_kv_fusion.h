// Reads grouped-query attention's keys and values where they are, as torch.export writes the
// Llama family's repeat_kv (transformers' sdpa attention with fewer key/value heads than query
// heads), for keys and values alike:
//   u = x.unsqueeze(-3); e = u.expand(..., kv, group, S, D); r = e.reshape(..., kv * group, S, D)
//   out = scaled_dot_product_attention(q, r_key, r_value, ...)
// Each reshape copies its head `group` times (two copies and four view nodes a layer). The
// attention node reads x instead with enable_gqa (query head h reads key/value head h / group:
// the same operands, so the same bits), and the six nodes do nothing.
//
// A pair fuses only where nothing else can tell: each value of both chains is read by the next
// alone and is no graph output, key and value repeat heads by the same group and the query has
// kv * group heads (literal sizes), x is float32 and the chains' sizes are x's with the group
// inserted and then merged, enable_gqa is absent or false, no node between the chains and the
// attention writes in place, and every kernel is nrt's own.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc): x's lifetime then reaches the attention.
void fuse_repeated_key_values(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
