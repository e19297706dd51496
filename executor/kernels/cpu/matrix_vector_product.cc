#include "executor/kernels/cpu/matrix_vector_product.h"

#include <algorithm>

#include "executor/kernels/cpu/cpu_features.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {

bool matrix_vector_product_available() { return cpu_has_avx2_fma(); }

bool matrix_vector_product(int64_t rows, int64_t cols, float alpha, const float* m, int64_t m_row, const float* v,
                           float beta, float* y) {
  if (!matrix_vector_product_available()) return false;
  // A thread's share reads at least 64 KiB of M: a split of less cost more in waking the other
  // threads than it saved.
  const int64_t grain = std::max<int64_t>(8, (int64_t{1} << 14) / std::max<int64_t>(cols, 1));
  parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
    avx2::matrix_vector_rows(cols, alpha, m, m_row, v, beta, y, begin, end);
  });
  return true;
}

}  // namespace nrt::exec::cpu
