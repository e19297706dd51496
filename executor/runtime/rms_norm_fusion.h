// Fuses RMSNorm as torch.export writes it for the Llama family (transformers' LlamaRMSNorm, and
// Mistral's and Qwen2's, the same code):
//   p = x.pow(2); m = p.mean(-1, keepdim=True); a = m + eps; r = a.rsqrt(); y = x * r;
//   [_assert_tensor_metadata(y, float32); y = y.to(float32);] out = weight * y
// Eight nodes over a few rows, each a kernel call: 6.5 us of llama_tiny's 0.23 ms a norm at hidden
// 64, five norms a run. The pow node computes the whole chain into its own result
// (fused_chains.h's RMSNorm kernel, each step in the nodes' arithmetic and order: the same bits), the
// last node becomes a view of that result, and the nodes between run the contract's absorbed-node
// kernel, which does nothing: their results are neither planned nor made.
//
// A chain fuses only where nothing else can tell: its nodes are consecutive, every value between
// its first and last node is read by the chain alone and is no graph output, x, the weight and every
// value are float32, the weight is 1-D of the rows' length and defined before the chain, eps,
// the exponent 2 and the reduced dim (the last, kept) are constants, and every node's kernel is
// nrt's own (a kernel library that replaced one is obeyed). Nodes keep their names and targets: a
// profile counts the chain in the pow's time.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc), as fuse_convolution_epilogues does.
void fuse_rms_norms(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
