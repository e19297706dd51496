// oneDNN's threads are OpenMP's, whose count is a per-thread setting: every call into oneDNN
// first gives the calling thread the count it should use, and returns it. That is
// intra_op_threads() once a run set it (nrt-run --threads N), else 1: unset, ops run on the
// calling thread (intra_op_threads.h). OpenMP's own default, one thread per core in every process,
// would oversubscribe the cores under mpirun (4 ranks x 2 busy-waiting threads on 2 cores made a
// tensor-parallel Llama miss a 90 s limit) and in servers running sessions side by side, the
// reason torchrun sets OMP_NUM_THREADS=1.
#pragma once

namespace nrt::exec::cpu {

int use_onednn_threads(int intra_op_threads);

}  // namespace nrt::exec::cpu
