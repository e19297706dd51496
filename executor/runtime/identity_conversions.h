// A conversion to the dtype a tensor already has is the tensor itself: torch's to(dtype) returns
// self where nothing changes (copy=False, the memory format kept), as the Llama family's RMSNorm
// writes it (hidden_states.to(torch.float32) on float32 states: five a 2-layer model, each a copy
// of the hidden states). Such a node becomes a view (aten::alias) of its input.
//
// A node is viewed only where torch returns self: aten::to.dtype with nrt's own kernel, float32 in
// and out, dtype float32, copy absent or false, memory_format absent, None or preserve_format, the
// result of the input's sizes.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc).
void view_identity_conversions(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
