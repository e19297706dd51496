#include "executor/kernels/cpu/batched_product.h"

#include "executor/kernels/cpu/dimensions.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/view_strides.h"

namespace nrt::exec::cpu {

ScalarType product_dtype(ScalarType t) {
  if (t == ScalarType::FLOAT16 || t == ScalarType::BFLOAT16) return ScalarType::FLOAT32;
  return t;
}

void product_2d(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta) {
  if (is_floating_dtype(c.dtype())) {
    gemm(a, b, c, alpha, beta);
  } else {
    integer_gemm(a, b, c);
  }
}

Tensor matrix_at(const Tensor& t, const std::vector<int64_t>& batch_index) {
  int64_t offset = t.storage_offset();
  for (size_t d = 0; d < batch_index.size(); ++d) offset += batch_index[d] * t.strides()[d];
  const size_t r = t.sizes().size() - 2;
  return t.as_strided({t.sizes()[r], t.sizes()[r + 1]}, {t.strides()[r], t.strides()[r + 1]}, offset);
}

void batched_product(const Tensor& a, const Tensor& b, const Tensor& out, const std::vector<int64_t>& batch) {
  const int64_t n = a.sizes()[a.sizes().size() - 2], k = a.sizes().back(), m = b.sizes().back();
  const int64_t batches = product(batch);
  // b shared by every batch and a foldable into rows: one large product.
  bool b_shared = true;
  for (size_t d = 0; d < batch.size(); ++d) b_shared = b_shared && (b.strides()[d] == 0 || batch[d] == 1);
  if (b_shared && batches > 1) {
    if (auto strides = view_strides(a.sizes(), a.strides(), {batches * n, k})) {
      const Tensor rows = a.as_strided({batches * n, k}, *strides, a.storage_offset());
      const Tensor out_rows = out.as_strided({batches * n, m}, {m, 1}, out.storage_offset());
      product_2d(rows, matrix_at(b, std::vector<int64_t>(batch.size(), 0)), out_rows);
      return;
    }
  }
  std::vector<int64_t> index(batch.size(), 0);
  for (int64_t i = 0; i < batches; ++i) {
    const Tensor c = out.as_strided({n, m}, {m, 1}, out.storage_offset() + i * n * m);
    product_2d(matrix_at(a, index), matrix_at(b, index), c);
    for (size_t d = batch.size(); d-- > 0;) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
  }
}

}  // namespace nrt::exec::cpu
