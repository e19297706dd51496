// Fuses the rotary position embedding as torch.export writes it for the Llama family
// (transformers' apply_rotary_pos_emb, for queries and keys alike):
//   a = x * cos; lo = x[..., :h]; hi = x[..., h:]; n = -hi; r = cat([n, lo], -1); b = r * sin; out = a + b
// Seven nodes over one head's rows, each a kernel call (slices and cat among them), twice a layer.
// The first mul computes the whole chain into its own result (fused_chains.h's rotary kernel,
// each product rounded and then summed, as the nodes do: the same bits), the add becomes a view of
// that result, and the nodes between do nothing.
//
// A chain fuses only where nothing else can tell: its nodes are consecutive, each value between its
// first and last node is read by the next of the chain alone and is no graph output, x, cos, sin
// and every value are float32, x's last dim is a literal 2h and both slices cut it at h, cos and
// sin broadcast to x's sizes and are defined before the chain, and every node's kernel is nrt's own.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc), as fuse_convolution_epilogues does.
void fuse_rotary_embeddings(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
