// oneDNN's threads are OpenMP's, whose count is a per-thread setting: every call into oneDNN
// first gives the calling thread the count it should use (intra_op_threads() once a run set it;
// 0 leaves OpenMP's default, OMP_NUM_THREADS or one per core).
#pragma once

namespace nrt::exec::cpu {

void use_onednn_threads(int threads);

}  // namespace nrt::exec::cpu
