// Threads inside ops: process-wide, as torch.set_num_threads is (nrt-run --threads N,
// SessionOptions::threads). Unset (0), ops run on the calling thread (float64 GEMMs at OpenBLAS's
// own default); set to N, element-wise maps over large tensors, attention's heads and the rows of
// layer and group norms split their work over N threads (the caller and N - 1 others), and the
// GEMMs and convolutions run on N oneDNN (or, for float64, OpenBLAS) threads.
// The split runs on OpenMP's team, the threads oneDNN's primitives run on: one set of threads per
// process. A pool of nrt's own beside it woke its workers through a condition variable, onto the
// core where OpenMP's were still spinning after a product: whisper_encoder_tiny's attention, split
// over its 4 heads, took 0.101 ms a call at 2 threads on that pool and 0.074 on OpenMP's team.
// Work is split into contiguous chunks, each element computed by exactly one thread in the same
// order as serially, so results do not depend on N.
#pragma once

#include <cstdint>
#include <functional>

namespace nrt::exec {

// 0: unset; 1 to 1024. OpenMP starts the team's threads on the first split.
void set_intra_op_threads(int threads);
// At most 1 in a child fork()ed after threads were set above 1: OpenMP's team is not there.
int intra_op_threads();

// Calls fn(begin, end) for contiguous chunks covering [0, n), at most intra_op_threads() of them
// and none under `grain` elements (one chunk, on the caller, when n < 2 * grain or threads <= 1).
// Returns when every chunk is done. A call made while another runs (a second program on another
// thread, or from inside a chunk or an OpenMP region) runs serially on its caller.
void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t begin, int64_t end)>& fn);

}  // namespace nrt::exec
