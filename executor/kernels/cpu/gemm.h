// Matrix products on 2-D strided views: float32 through oneDNN's sgemm, float64 and the products
// of a vector (gemv, bandwidth-bound) through OpenBLAS. Operands whose layout BLAS can describe
// (unit stride along one dimension, a leading dimension along the other) are passed as they are,
// transposed when column-major; others (expanded, doubly strided) are copied first.
#pragma once

#include "executor/runtime/tensor.h"

namespace nrt::exec::cpu {

// c = alpha * a @ b + beta * c with a [m, k], b [k, n] and c [m, n] contiguous, all float32 or
// all float64. With beta == 0, c's previous contents are ignored (NaN included).
void gemm(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta);

// While alive, gemm runs on one thread (OpenBLAS's or oneDNN's): for kernels that split many small products over
// the intra-op threads themselves (attention per head), where OpenBLAS's own threads inside each
// would contend with them. Restores the intra-op thread count after.
class OneBlasThreadPerProduct {
 public:
  OneBlasThreadPerProduct();
  ~OneBlasThreadPerProduct();
  OneBlasThreadPerProduct(const OneBlasThreadPerProduct&) = delete;
  OneBlasThreadPerProduct& operator=(const OneBlasThreadPerProduct&) = delete;
};

// The same for integer dtypes (a, b and c of one integral dtype, c contiguous), computed exactly
// with wrap-around; alpha and beta are 1 and 0.
void integer_gemm(const Tensor& a, const Tensor& b, const Tensor& c);

}  // namespace nrt::exec::cpu
