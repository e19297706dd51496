// The float32 matrix-vector product (executor/kernels/cpu/matrix_vector_product.h) against the
// sum in double: row and column counts that are not whole blocks of eight (the one-row blocks and
// the masked last columns), rows further apart than their length, alpha and beta (beta 0 not
// reading y); its bits at 1 and 3 threads; and gemm's batch-1 products, which it now runs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/matrix_vector_product.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/tensor.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

// alpha * m v + beta * y0 in double; its error bound: the float sum's, a few ulps of the sum of
// magnitudes per term.
struct Reference {
  std::vector<double> value, magnitude;
};

Reference reference(int64_t rows, int64_t cols, float alpha, const std::vector<float>& m, int64_t m_row,
                    const std::vector<float>& v, float beta, const std::vector<float>& y0) {
  Reference r{std::vector<double>(rows), std::vector<double>(rows)};
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0, magnitude = 0;
    for (int64_t p = 0; p < cols; ++p) {
      sum += static_cast<double>(m[i * m_row + p]) * v[p];
      magnitude += std::fabs(static_cast<double>(m[i * m_row + p]) * v[p]);
    }
    r.value[i] = alpha * sum + (beta == 0.0f ? 0.0 : beta * static_cast<double>(y0[i]));
    r.magnitude[i] = std::fabs(alpha) * magnitude + std::fabs(beta * static_cast<double>(y0[i]));
  }
  return r;
}

TEST(MatrixVectorProduct, MatchesTheSumInDouble) {
  if (!matrix_vector_product_available()) GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  struct Case {
    int64_t rows, cols, m_row;
    float alpha, beta;
  };
  const Case cases[] = {
      {1, 1, 1, 1.0f, 0.0f},     {7, 5, 5, 1.0f, 0.0f},      {8, 8, 8, 1.0f, 0.0f},
      {17, 13, 16, 0.5f, 1.0f},  {64, 1280, 1280, 1.0f, 1.0f}, {1000, 97, 101, -2.0f, 0.25f},
      {9, 4096, 4100, 1.0f, 0.0f},
  };
  for (const Case& c : cases) {
    const auto m = uniform(static_cast<size_t>(c.rows * c.m_row), 1, 1.0f), v = uniform(static_cast<size_t>(c.cols), 2, 1.0f);
    const auto y0 = uniform(static_cast<size_t>(c.rows), 3, 1.0f);
    std::vector<float> y = y0;
    ASSERT_TRUE(matrix_vector_product(c.rows, c.cols, c.alpha, m.data(), c.m_row, v.data(), c.beta, y.data()));
    const Reference want = reference(c.rows, c.cols, c.alpha, m, c.m_row, v, c.beta, y0);
    for (int64_t i = 0; i < c.rows; ++i) {
      const double bound = 4 * std::numeric_limits<float>::epsilon() * (want.magnitude[i] + 1e-30) * (1 + std::log2(c.cols + 1));
      ASSERT_NEAR(y[i], want.value[i], bound) << c.rows << "x" << c.cols << " row " << i;
    }
  }
}

TEST(MatrixVectorProduct, BetaZeroDoesNotReadY) {
  if (!matrix_vector_product_available()) GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  const auto m = uniform(11 * 9, 4, 1.0f), v = uniform(9, 5, 1.0f);
  std::vector<float> y(11, std::numeric_limits<float>::quiet_NaN());
  ASSERT_TRUE(matrix_vector_product(11, 9, 1.0f, m.data(), 9, v.data(), 0.0f, y.data()));
  for (float e : y) EXPECT_FALSE(std::isnan(e));
}

TEST(MatrixVectorProduct, ThreadCountsGiveTheSameBits) {
  if (!matrix_vector_product_available()) GTEST_SKIP() << "no AVX2 and FMA on this CPU";
  const int64_t rows = 1003, cols = 517;  // several threads' shares, none a whole number of blocks
  const auto m = uniform(static_cast<size_t>(rows * cols), 6, 1.0f), v = uniform(static_cast<size_t>(cols), 7, 1.0f);
  std::vector<float> one(rows), three(rows);
  set_intra_op_threads(1);
  ASSERT_TRUE(matrix_vector_product(rows, cols, 1.0f, m.data(), cols, v.data(), 0.0f, one.data()));
  set_intra_op_threads(3);
  ASSERT_TRUE(matrix_vector_product(rows, cols, 1.0f, m.data(), cols, v.data(), 0.0f, three.data()));
  set_intra_op_threads(0);
  EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)), 0);
}

// gemm's product of one row with a transposed weight view (batch-1 linear: x [1, k] @ w^T) and of
// a matrix with one column, against the sum in double.
TEST(MatrixVectorProduct, GemmBatchOneProducts) {
  const int64_t k = 300, n = 77;
  const Tensor x = Tensor::empty(ScalarType::FLOAT32, {1, k}), w = Tensor::empty(ScalarType::FLOAT32, {n, k});
  const auto xv = uniform(k, 8, 1.0f), wv = uniform(static_cast<size_t>(n * k), 9, 1.0f);
  std::memcpy(x.data<float>(), xv.data(), xv.size() * sizeof(float));
  std::memcpy(w.data<float>(), wv.data(), wv.size() * sizeof(float));
  const Tensor w_t = w.as_strided({k, n}, {1, k}, 0);
  const Tensor row = Tensor::empty(ScalarType::FLOAT32, {1, n}), column = Tensor::empty(ScalarType::FLOAT32, {n, 1});
  gemm(x, w_t, row, 1.0, 0.0);
  gemm(w, x.as_strided({k, 1}, {1, 1}, 0), column, 1.0, 0.0);
  const Reference want = reference(n, k, 1.0f, wv, k, xv, 0.0f, std::vector<float>(n));
  for (int64_t i = 0; i < n; ++i) {
    const double bound = 4 * std::numeric_limits<float>::epsilon() * want.magnitude[i] * (1 + std::log2(k + 1));
    EXPECT_NEAR(row.data<float>()[i], want.value[i], bound) << i;
    EXPECT_NEAR(column.data<float>()[i], want.value[i], bound) << i;
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
