// The few-position pointwise product (executor/kernels/cpu/few_position_product.h) against the sum
// in double, on weights packed here in blocks of 16 outputs: 1 to 4 positions, output counts that
// are not whole blocks or whole groups of four blocks, with and without bias, rows and columns
// as outputs (NHWC and NCHW); and its bits at 1 and 3 threads.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "executor/kernels/cpu/few_position_product.h"
#include "executor/runtime/intra_op_threads.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

// w [out, in] as [ceil(out / 16)][in][16], zeros past `out`.
std::vector<float> packed(const std::vector<float>& w, int64_t out, int64_t in) {
  const int64_t blocks = (out + 15) / 16;
  std::vector<float> p(static_cast<size_t>(blocks * in * 16), 0.0f);
  for (int64_t o = 0; o < out; ++o) {
    for (int64_t i = 0; i < in; ++i) p[static_cast<size_t>(((o / 16) * in + i) * 16 + o % 16)] = w[static_cast<size_t>(o * in + i)];
  }
  return p;
}

struct Case {
  int64_t positions, in, out;
  bool bias, rows_out;  // rows_out: y[p][o] (NHWC); else y[o][p] (NCHW)
};

// Runs a case; returns y, and checks it against the sum in double within the float sum's bound.
std::vector<float> run_case(const Case& c) {
  const std::vector<float> w = uniform(static_cast<size_t>(c.out * c.in), 1);
  const std::vector<float> x = uniform(static_cast<size_t>(c.positions * c.in), 2, 2.0f);
  const std::vector<float> b = uniform(static_cast<size_t>(c.out), 3);
  const std::vector<float> p = packed(w, c.out, c.in);
  std::vector<float> y(static_cast<size_t>(c.positions * c.out), NAN);
  const int64_t y_position = c.rows_out ? c.out : 1, y_output = c.rows_out ? 1 : c.positions;
  few_position_product(c.positions, c.in, c.out, p.data(), x.data(), c.in, c.bias ? b.data() : nullptr, y.data(),
                       y_position, y_output);
  for (int64_t q = 0; q < c.positions; ++q) {
    for (int64_t o = 0; o < c.out; ++o) {
      double sum = c.bias ? b[static_cast<size_t>(o)] : 0.0, magnitude = std::fabs(sum);
      for (int64_t i = 0; i < c.in; ++i) {
        const double term = static_cast<double>(w[static_cast<size_t>(o * c.in + i)]) * x[static_cast<size_t>(q * c.in + i)];
        sum += term;
        magnitude += std::fabs(term);
      }
      const float got = y[static_cast<size_t>(q * y_position + o * y_output)];
      EXPECT_NEAR(got, sum, 1e-6 * (static_cast<double>(c.in) + 1) * magnitude + 1e-30)
          << "positions " << c.positions << " in " << c.in << " out " << c.out << " bias " << c.bias << " rows "
          << c.rows_out << ": position " << q << " output " << o;
    }
  }
  return y;
}

const Case kCases[] = {
    {1, 1, 1, false, true},    {4, 7, 15, true, true},     {2, 33, 16, true, false},  {3, 33, 17, false, true},
    {4, 192, 70, true, false}, {4, 96, 64, true, true},    {1, 5, 130, true, false},  {3, 48, 200, false, false},
};

TEST(FewPositionProduct, MatchesTheSumInDouble) {
  if (!few_position_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const Case& c : kCases) run_case(c);
}

TEST(FewPositionProduct, GivesOneThreadsBitsAtThreeThreads) {
  if (!few_position_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  // 4096 outputs of 8 inputs: several threads' shares of four-block groups.
  const Case big{4, 8, 4096, true, true};
  set_intra_op_threads(1);
  const std::vector<float> one = run_case(big);
  set_intra_op_threads(3);
  const std::vector<float> three = run_case(big);
  set_intra_op_threads(0);
  EXPECT_EQ(one, three);
}

}  // namespace
}  // namespace nrt::exec::cpu
