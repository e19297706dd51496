#include "executor/kernels/cpu/gemm.h"

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include <algorithm>
#include <atomic>
#include <type_traits>

#include "executor/kernels/cpu/element_conversion.h"
#include "executor/kernels/cpu/matrix_vector_product.h"
#include "executor/kernels/cpu/onednn_threads.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/intra_op_threads.h"

namespace nrt::exec::cpu {
namespace {

struct BlasMatrix {
  Tensor holder;  // keeps a copy alive when one was needed
  const void* data = nullptr;
  CBLAS_TRANSPOSE transpose = CblasNoTrans;
  int64_t leading = 1;
};

// Describes the [rows, cols] view `t` for row-major BLAS.
BlasMatrix blas_matrix(const Tensor& t) {
  const int64_t rows = t.sizes()[0], cols = t.sizes()[1];
  const int64_t row_stride = t.strides()[0], col_stride = t.strides()[1];
  BlasMatrix m;
  if (cols == 1 || col_stride == 1) {
    const int64_t leading = rows == 1 ? std::max<int64_t>(cols, 1) : row_stride;
    if (leading >= std::max<int64_t>(cols, 1)) {
      m.data = t.raw_data();
      m.leading = leading;
      return m;
    }
  }
  if (rows == 1 || row_stride == 1) {
    const int64_t leading = cols == 1 ? std::max<int64_t>(rows, 1) : col_stride;
    if (leading >= std::max<int64_t>(rows, 1)) {
      m.data = t.raw_data();
      m.transpose = CblasTrans;
      m.leading = leading;
      return m;
    }
  }
  m.holder = converted_copy(t, t.dtype());
  m.data = m.holder.raw_data();
  m.leading = std::max<int64_t>(cols, 1);
  return m;
}

template <class T>
void scale_in_place(const Tensor& c, T beta) {
  T* p = c.data<T>();
  const int64_t n = c.numel();
  if (beta == T(0)) {
    std::fill(p, p + n, T(0));
  } else if (beta != T(1)) {
    for (int64_t i = 0; i < n; ++i) p[i] *= beta;
  }
}

// OpenBLAS and oneDNN run on intra_op_threads() threads once a run set them (nrt-run --threads N);
// unset, OpenBLAS keeps its own default (OPENBLAS_NUM_THREADS, else one per core) and oneDNN runs
// on the calling thread (onednn_threads.h). Inside a OneBlasThreadPerProduct scope both run on one.
std::atomic<int> g_applied{0};
std::atomic<int> g_single_scopes{0};

// The thread count a product should use: 1 inside a OneBlasThreadPerProduct scope, else the
// intra-op count (0: unset).
int product_threads() { return g_single_scopes.load(std::memory_order_relaxed) > 0 ? 1 : intra_op_threads(); }

void apply_blas_threads() {
  const int wanted = product_threads();
  if (wanted > 0 && g_applied.load(std::memory_order_relaxed) != wanted) {
    openblas_set_num_threads(wanted);
    g_applied.store(wanted, std::memory_order_relaxed);
  }
}

// c = alpha * matrix @ vector + beta * c through gemv, c contiguous: `matrix` is the product's
// matrix operand as BLAS sees it ([rows, cols] of the product), `vector` its vector with a
// positive element stride. OpenBLAS's gemm with one row or column runs at a third of gemv's speed
// (batch-1 linear, 9216 -> 4096 in float32: 20.4 ms against 8.2 ms), so products of a vector take
// this path.
template <class T>
void vector_product(const BlasMatrix& matrix, int64_t rows, int64_t cols, const T* vector, int64_t stride,
                    const Tensor& c, double alpha, double beta) {
  // BLAS scales y by beta; with beta 0 a NaN already in y must not survive (gemm.h's promise).
  if (beta == 0.0) scale_in_place(c, T(0));
  // The stored matrix is row-major [rows, cols], or its transpose [cols, rows].
  const bool stored_transposed = matrix.transpose == CblasTrans;
  const auto R = static_cast<blasint>(stored_transposed ? cols : rows);
  const auto C = static_cast<blasint>(stored_transposed ? rows : cols);
  if constexpr (std::is_same_v<T, float>) {
    // A row-major matrix against a contiguous vector (batch-1 linear): eight of its rows streamed
    // side by side, 1.1-1.3x oneDNN's sgemm from memory (matrix_vector_product.h).
    if (!stored_transposed && stride == 1 &&
        matrix_vector_product(rows, cols, static_cast<float>(alpha), static_cast<const float*>(matrix.data),
                              matrix.leading, vector, static_cast<float>(beta), c.data<float>())) {
      return;
    }
    // oneDNN's sgemm with one row streams the matrix as fast as OpenBLAS's gemv, and keeps float32
    // on one threading runtime: OpenBLAS's threads and OpenMP's, both waiting busily between
    // calls, slowed each other 10-100x when a model used both. c^T [1, rows] = v [1, cols] @ M^T,
    // v stored as a column of stride `stride`.
    use_onednn_threads(product_threads());
    if (dnnl_sgemm('T', stored_transposed ? 'N' : 'T', 1, rows, cols, static_cast<float>(alpha), vector, stride,
                   static_cast<const float*>(matrix.data), matrix.leading, static_cast<float>(beta), c.data<float>(),
                   rows) == dnnl_success) {
      return;
    }
  }
  if constexpr (std::is_same_v<T, double>) {
    cblas_dgemv(CblasRowMajor, matrix.transpose, R, C, alpha, static_cast<const double*>(matrix.data),
                static_cast<blasint>(matrix.leading), vector, static_cast<blasint>(stride), beta, c.data<double>(), 1);
  } else {
    cblas_sgemv(CblasRowMajor, matrix.transpose, R, C, static_cast<float>(alpha), static_cast<const float*>(matrix.data),
                static_cast<blasint>(matrix.leading), vector, static_cast<blasint>(stride), static_cast<float>(beta),
                c.data<float>(), 1);
  }
}

// The vector products of gemm: a of one row (c = a @ b is b's transpose times a) or b of one
// column. False when neither applies (or the vector's stride is not positive).
template <class T>
bool gemm_as_vector_product(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  if (m == 1 && n > 1 && a.strides()[1] > 0) {
    BlasMatrix bt = blas_matrix(b);
    // b^T as a [n, k] matrix: stored b row-major [k, n] is b^T transposed, and vice versa.
    bt.transpose = bt.transpose == CblasTrans ? CblasNoTrans : CblasTrans;
    vector_product<T>(bt, n, k, a.data<T>(), a.strides()[1], c, alpha, beta);
    return true;
  }
  if (n == 1 && m > 1 && b.strides()[0] > 0) {
    vector_product<T>(blas_matrix(a), m, k, b.data<T>(), b.strides()[0], c, alpha, beta);
    return true;
  }
  return false;
}

}  // namespace

OneBlasThreadPerProduct::OneBlasThreadPerProduct() {
  g_single_scopes.fetch_add(1);
  apply_blas_threads();
}

OneBlasThreadPerProduct::~OneBlasThreadPerProduct() {
  g_single_scopes.fetch_sub(1);
  apply_blas_threads();
}

void gemm(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  if (m == 0 || n == 0) return;
  apply_blas_threads();
  const bool is_double = c.dtype() == ScalarType::FLOAT64;
  if (k == 0) {
    if (is_double) scale_in_place(c, beta);
    else scale_in_place(c, static_cast<float>(beta));
    return;
  }
  if (is_double ? gemm_as_vector_product<double>(a, b, c, alpha, beta) : gemm_as_vector_product<float>(a, b, c, alpha, beta)) {
    return;
  }
  const BlasMatrix x = blas_matrix(a), y = blas_matrix(b);
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  if (is_double) {
    cblas_dgemm(CblasRowMajor, x.transpose, y.transpose, M, N, K, alpha, static_cast<const double*>(x.data),
                static_cast<blasint>(x.leading), static_cast<const double*>(y.data), static_cast<blasint>(y.leading),
                beta, c.data<double>(), N);
    return;
  }
  // Float32 products go to oneDNN's sgemm: 1.16-1.54x OpenBLAS 0.3.21's on this project's shapes
  // (docs/PERFORMANCE.md), the same bits at any thread count. OpenBLAS remains its fallback.
  use_onednn_threads(product_threads());
  const dnnl_status_t status =
      dnnl_sgemm(x.transpose == CblasTrans ? 'T' : 'N', y.transpose == CblasTrans ? 'T' : 'N', m, n, k,
                 static_cast<float>(alpha), static_cast<const float*>(x.data), x.leading,
                 static_cast<const float*>(y.data), y.leading, static_cast<float>(beta), c.data<float>(), n);
  if (status != dnnl_success) {
    cblas_sgemm(CblasRowMajor, x.transpose, y.transpose, M, N, K, static_cast<float>(alpha),
                static_cast<const float*>(x.data), static_cast<blasint>(x.leading), static_cast<const float*>(y.data),
                static_cast<blasint>(y.leading), static_cast<float>(beta), c.data<float>(), N);
  }
}

namespace {

template <class T>
void integer_gemm_typed(const Tensor& a, const Tensor& b, const Tensor& c) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  const int64_t as0 = a.strides()[0], as1 = a.strides()[1], bs0 = b.strides()[0], bs1 = b.strides()[1];
  const T* x = a.data<T>();
  const T* y = b.data<T>();
  T* z = c.data<T>();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      T acc = 0;
      for (int64_t p = 0; p < k; ++p) acc = wrapping_add(acc, wrapping_mul(x[i * as0 + p * as1], y[p * bs0 + j * bs1]));
      z[i * n + j] = acc;
    }
  }
}

}  // namespace

void integer_gemm(const Tensor& a, const Tensor& b, const Tensor& c) {
  switch (c.dtype()) {
    case ScalarType::INT8: return integer_gemm_typed<int8_t>(a, b, c);
    case ScalarType::INT16: return integer_gemm_typed<int16_t>(a, b, c);
    case ScalarType::INT32: return integer_gemm_typed<int32_t>(a, b, c);
    case ScalarType::INT64: return integer_gemm_typed<int64_t>(a, b, c);
    case ScalarType::UINT8: return integer_gemm_typed<uint8_t>(a, b, c);
    default: return;
  }
}

}  // namespace nrt::exec::cpu
