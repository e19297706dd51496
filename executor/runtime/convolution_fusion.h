// Fuses a convolution with the inference batch norm, the residual add and the activation that
// follow it (conv -> batch_norm -> [add_(identity)] -> relu_, the blocks of torchvision's CNNs): the
// convolution node computes them all as it writes its output, and the other nodes become views of
// that output. Each was a pass over the activations of its own (mobilenet_v2: 15% and 6% of a run);
// the kernel folds the batch norm into the convolution's weights and bias
// (executor/kernels/cpu/batch_norm_folding.h) and oneDNN applies the activation in its epilogue.
//
// A chain fuses only where nothing else can tell: the nodes are consecutive, the convolution's
// result (and the batch norm's, under a functional activation) has no other reader and is not a
// graph output, the batch norm is in inference mode with its parameters defined before the
// convolution, the dtype is float32 or float64 (the 16-bit floats would round in other places),
// and the convolution's kernel comes from where the fused kernel does (a kernel library that
// replaced it knows nothing of the epilogue). Its nodes keep their names and targets: a profile
// counts the batch norm and the activation in the convolution's time.
//
// Before a 2-D float32 convolution, a mul of x by a per-channel scale [N or 1, C, 1, 1] that only
// the convolution reads (a squeeze-excitation block's `scale * x`) becomes a view of x, and the
// convolution scales its input (convolution_epilogue.h's kInputScale). A convolution's result that
// only convolutions and global average pools read is written channels-last.
//
// Last, an inverted-residual block's 1x1 expansion whose result (after its fused batch norm and
// activation) only a depthwise convolution reads, and is larger than a core's L2, runs inside that
// convolution (convolution_epilogue.h's kExpansionWeight): the expanded rows never reach memory.
// Then a depthwise convolution (without such an expansion) whose large result in wide rows only a
// pointwise projection reads runs inside that projection (kDepthwiseWeight): its rows never reach
// memory either.
#pragma once

#include "executor/runtime/execution_plan.h"
#include "executor/runtime/kernel.h"

namespace nrt::exec {

// Runs on a plan whose nodes are planned and whose lifetimes are not yet finished
// (execution_plan.cc): fused values become views, which lifetimes then follow.
void fuse_convolution_epilogues(ExecutionPlan& plan, const KernelRegistry& registry);

}  // namespace nrt::exec
