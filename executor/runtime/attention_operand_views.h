// A contiguous copy read only as an attention's query, key or value is a view of what it copies:
// nrt's scaled_dot_product_attention reads its operands through their strides (a transposed
// head of a [positions, heads, features] product included), so the copy only moves bytes. The
// Whisper and BART families write `x.view(b, s, heads, d).transpose(1, 2).contiguous()` before
// each attention: six copies a 2-layer whisper encoder.
//
// A node is viewed where it is aten::contiguous.default with nrt's own kernel, the memory format
// absent or contiguous_format, its float32 result read once, by nrt's own attention as query, key
// or value, with no write in place from the copy to the attention.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc).
void view_attention_operands(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
