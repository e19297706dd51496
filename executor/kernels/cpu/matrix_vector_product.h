// Float32 y = alpha * M v + beta * y with M row-major: batch-1 linear (M its weights [out, in]),
// and a 1x1 convolution over one position. Such a product does two flops per element of M it
// reads, so its time is M's streaming from memory. Eight rows are read side by side, each element
// once, against v held in the first-level cache: from memory this streamed 1.1-1.3x as fast as
// oneDNN's sgemm with one row (1000 x 1280: 17.4 against 13.3 GB/s; 4096 x 9216: 22.5 against
// 20.5; docs/PERFORMANCE.md). Rows are split over the intra-op threads, each y element computed by
// one thread in one order, so the bits do not depend on the thread count.
#pragma once

#include <cstdint>

namespace nrt::exec::cpu {

// Whether matrix_vector_product runs here: a CPU with AVX2 and FMA.
bool matrix_vector_product_available();

// y[i] = alpha * sum_p m[i * m_row + p] * v[p] + beta * y[i] for i < rows, p < cols (y not read
// where beta is 0, so a NaN already there does not survive). False, having written nothing, where
// it does not run (matrix_vector_product_available).
bool matrix_vector_product(int64_t rows, int64_t cols, float alpha, const float* m, int64_t m_row, const float* v,
                           float beta, float* y);

namespace avx2 {
// Rows [begin, end) of matrix_vector_product, built with AVX2 and FMA (matrix_vector_product_avx2.cc).
void matrix_vector_rows(int64_t cols, float alpha, const float* m, int64_t m_row, const float* v, float beta, float* y,
                        int64_t begin, int64_t end);
}  // namespace avx2

}  // namespace nrt::exec::cpu
