#include "executor/kernels/cpu/gemm.h"

#include <cblas.h>

#include <algorithm>

#include "executor/kernels/cpu/element_conversion.h"
#include "executor/kernels/cpu/tensor_copy.h"

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

}  // namespace

void gemm(const Tensor& a, const Tensor& b, const Tensor& c, double alpha, double beta) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  if (m == 0 || n == 0) return;
  const bool is_double = c.dtype() == ScalarType::FLOAT64;
  if (k == 0) {
    if (is_double) scale_in_place(c, beta);
    else scale_in_place(c, static_cast<float>(beta));
    return;
  }
  const BlasMatrix x = blas_matrix(a), y = blas_matrix(b);
  const auto M = static_cast<blasint>(m), N = static_cast<blasint>(n), K = static_cast<blasint>(k);
  if (is_double) {
    cblas_dgemm(CblasRowMajor, x.transpose, y.transpose, M, N, K, alpha, static_cast<const double*>(x.data),
                static_cast<blasint>(x.leading), static_cast<const double*>(y.data), static_cast<blasint>(y.leading),
                beta, c.data<double>(), N);
  } else {
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
