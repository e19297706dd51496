// Whether float32 matrix products may run in TF32 on devices that have it (CUDA's tensor cores):
// process-wide, as torch.backends.cuda.matmul.allow_tf32 is; off unless a run asks
// (nrt-run --allow-tf32, SessionOptions::allow_tf32). The CPU kernels compute float32 exactly
// either way.
#pragma once

namespace nrt::exec {

void set_allow_tf32(bool allow);
bool allow_tf32();

}  // namespace nrt::exec
