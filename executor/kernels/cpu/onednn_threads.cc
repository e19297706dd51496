#include "executor/kernels/cpu/onednn_threads.h"

// libgomp's setter, declared here: omp.h comes with gcc only (the ASan build is clang's).
extern "C" void omp_set_num_threads(int threads);

namespace nrt::exec::cpu {

int use_onednn_threads(int intra_op_threads) {
  const int threads = intra_op_threads > 0 ? intra_op_threads : 1;
  omp_set_num_threads(threads);
  return threads;
}

}  // namespace nrt::exec::cpu
