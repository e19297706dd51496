// The small products of attention heads (executor/kernels/cpu/small_product.h) against the sum in
// double: row counts around the 4-row tile (1 to 3 rows left), column counts around and past the
// 64-column band (a partial last block of 16), depth 0, a read by its transpose (unit row stride),
// b's rows further apart than their length, c's rows too (the gaps untouched), alpha applied after
// the sum, b as plain rows or packed in blocks of 16 columns (a linear's weights) with a bias added
// after the scaling, and each output's bits the same whichever tile computed it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "executor/kernels/cpu/small_product.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

TEST(SmallProduct, TilesAgreeWithTheSumInDouble) {
  if (!small_product_available()) GTEST_SKIP() << "this CPU lacks AVX-512 F";
  const float alpha = 0.375f;
  for (int64_t m : {1, 3, 4, 5, 9}) {
    for (int64_t n : {1, 15, 16, 17, 48, 64, 65, 130}) {
      for (int64_t depth : {0, 1, 7, 32}) {
        for (bool transposed : {false, true}) {
          for (bool packed : {false, true}) {
            const std::vector<float> a = uniform(static_cast<size_t>(m * depth), 1);
            const int64_t b_row = n + 3, c_row = n + 5;
            const std::vector<float> b = uniform(static_cast<size_t>(std::max<int64_t>(depth, 1) * b_row), 2);
            // a [m, depth] as stored, or its transpose [depth, m] read by columns.
            const int64_t a_row = transposed ? 1 : depth, a_col = transposed ? m : 1;
            // Packed: [ceil(n / 16)][depth][16], zeros past n, and a bias.
            const int64_t blocks = (n + 15) / 16;
            std::vector<float> blocked(static_cast<size_t>(std::max<int64_t>(blocks * depth * 16, 1)), 0.0f);
            for (int64_t t = 0; t < depth; ++t) {
              for (int64_t j = 0; j < n; ++j) {
                blocked[static_cast<size_t>(((j / 16) * depth + t) * 16 + j % 16)] =
                    b[static_cast<size_t>(t * b_row + j)];
              }
            }
            const std::vector<float> bias = uniform(static_cast<size_t>(n), 3);
            const float* b_data = packed ? blocked.data() : b.data();
            const int64_t b_step = packed ? 16 : b_row, b_block = packed ? 16 * depth : 16;
            const float* offsets = packed ? bias.data() : nullptr;
            std::vector<float> c(static_cast<size_t>(m * c_row), -7.0f);
            avx512::small_product(m, n, depth, alpha, a.data(), a_row, a_col, b_data, b_step, b_block, offsets,
                                  c.data(), c_row);
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < c_row; ++j) {
                const float got = c[static_cast<size_t>(i * c_row + j)];
                if (j >= n) {
                  EXPECT_EQ(got, -7.0f) << "a gap past row " << i << " was written";
                  continue;
                }
                double sum = 0, magnitude = 0;
                for (int64_t t = 0; t < depth; ++t) {
                  const double term = static_cast<double>(a[static_cast<size_t>(i * a_row + t * a_col)]) *
                                      b[static_cast<size_t>(t * b_row + j)];
                  sum += term;
                  magnitude += std::fabs(term);
                }
                const double want = alpha * sum + (packed ? bias[static_cast<size_t>(j)] : 0.0f);
                EXPECT_NEAR(got, want, 1e-6 * (1 + alpha * magnitude))
                    << m << "x" << n << "x" << depth << (transposed ? " (a transposed)" : "")
                    << (packed ? " (b packed)" : "") << " at " << i << ", " << j;
              }
            }
            // Row i alone (the one-row tile) gives the bits the tiles gave it.
            for (int64_t i = 0; i < m; ++i) {
              std::vector<float> alone(static_cast<size_t>(n));
              const float* row = depth > 0 ? a.data() + i * a_row : nullptr;  // a is empty at depth 0
              avx512::small_product(1, n, depth, alpha, row, a_row, a_col, b_data, b_step, b_block, offsets,
                                    alone.data(), n);
              EXPECT_EQ(std::memcmp(alone.data(), c.data() + i * c_row, static_cast<size_t>(n) * sizeof(float)), 0)
                  << m << "x" << n << "x" << depth << " row " << i;
            }
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
