// Fuses the gated feed-forward's product as torch.export writes it for the Llama family
// (transformers' LlamaMLP: down_proj(act_fn(gate_proj(x)) * up_proj(x))):
//   s = silu(gate); ... up = linear(x, ...) ...; out = s * up (or up * s)
// Two passes over the intermediate width, each a kernel call, once a layer. The mul computes
// silu(gate) * up into its own result (fused_chains.h's SiLU-mul kernel: SiLU's loop, then the
// product, each rounded as the nodes round them: the same bits), and the silu node does nothing.
// The kernel runs at the mul because `up` is usually computed between the two.
//
// A pair fuses only where nothing else can tell: the silu's result is read by the mul alone and is
// no graph output, gate, up and the result are float32 tensors of the same sizes, no node between
// the two writes in place (gate is read later than before), and both kernels are nrt's own.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc): gate's lifetime then reaches the mul.
void fuse_silu_products(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
