#include "executor/kernels/cpu/onednn_threads.h"

// libgomp's setter, declared here: omp.h comes with gcc only (the ASan build is clang's).
extern "C" void omp_set_num_threads(int threads);

namespace nrt::exec::cpu {

void use_onednn_threads(int threads) {
  if (threads > 0) omp_set_num_threads(threads);
}

}  // namespace nrt::exec::cpu
