#include "executor/kernels/cpu/onednn_threads.h"

#include "executor/runtime/libgomp.h"

namespace nrt::exec::cpu {

int use_onednn_threads(int intra_op_threads) {
  const int threads = intra_op_threads > 0 ? intra_op_threads : 1;
  omp_set_num_threads(threads);
  return threads;
}

}  // namespace nrt::exec::cpu
