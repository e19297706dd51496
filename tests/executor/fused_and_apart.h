// The fusion tests' comparison (rms_norm_fusion_test, rotary_fusion_test, silu_mul_fusion_test,
// repeated_kv_fusion_test): a program whose chain the plan fuses against the same program with a
// value inside the chain made a graph output, which keeps its nodes apart.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "executor/runtime/executor.h"

namespace nrt::testing {

// Runs both on `inputs` at 1 and 3 intra-op threads and expects each of `fused`'s first `compared`
// outputs (all of them by default) to have the bits of `apart`'s output at the same position.
// False, with a test failure, where a run fails.
bool same_bits_as_apart(exec::Executor& fused, exec::Executor& apart, const exec::NamedInputs& inputs,
                        const std::string& label, size_t compared = SIZE_MAX);

}  // namespace nrt::testing
