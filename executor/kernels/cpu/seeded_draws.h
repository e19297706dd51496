// Training-mode dropout, drawn from the run's seed (seeded_random_kernels.cc): shared by the
// dropout kernels that also serve inference (view_kernels.cc's dropout, copy_kernels.cc's
// native_dropout).
#pragma once

#include "executor/runtime/kernel.h"

namespace nrt::exec::cpu {

// Keeps each element with probability 1 - p, scaled by 1 / (1 - p) (0 when p is 1), into output
// 0; with `mask`, the kept elements as bool into output 1.
Status dropout_in_training(KernelContext& ctx, const Tensor& input, double p, bool mask);

}  // namespace nrt::exec::cpu
