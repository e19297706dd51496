// Matrix products over batches of strided 2-D views, shared by the matmul family
// (linalg_kernels.cc) and einsum (einsum_kernels.cc): float32/float64 through OpenBLAS, integer
// dtypes exact with wrap-around; float16/bfloat16 are computed in float32 by the callers.
#pragma once

#include <vector>

#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// The dtype a product of `t` operands computes in: float32 for float16 and bfloat16, else `t`.
ScalarType product_dtype(ScalarType t);

// c = alpha * a @ b + beta * c (floating) or c = a @ b (integral) for 2-D views, c contiguous of
// the compute dtype; a and b of the compute dtype.
void product_2d(const Tensor& a, const Tensor& b, const Tensor& c, double alpha = 1.0, double beta = 0.0);

// The 2-D matrix of `t` (rank >= 2) at the leading `batch_index`.
Tensor matrix_at(const Tensor& t, const std::vector<int64_t>& batch_index);

// out[batch..., n, m] = a[batch..., n, k] @ b[batch..., k, m]; a and b expanded to `batch` and of
// the compute dtype, out contiguous of it.
void batched_product(const Tensor& a, const Tensor& b, const Tensor& out, const std::vector<int64_t>& batch);

}  // namespace nrt::exec::cpu
