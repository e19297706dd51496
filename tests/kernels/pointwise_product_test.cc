// The pointwise products (executor/kernels/cpu/pointwise_product.h) against the sum in double, on
// weights packed in blocks of 16 outputs (packed_weights.h).
// - Few positions: 1 to 4 positions, output counts that are not whole blocks or whole groups of
//   four blocks, with and without bias, rows and columns as outputs (NHWC and NCHW).
// - Tiles: row counts below, at and past a tile's (the last tile moved back), every count of blocks
//   left after the groups of four, rows further apart than their length (the gaps untouched), relu
//   and hardtanh clamps (a NaN input stays NaN).
// - Both: the bits at 1 and 3 threads, the tiles split by blocks and by rows.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "executor/kernels/cpu/pointwise_product.h"
#include "executor/runtime/intra_op_threads.h"
#include "tests/kernels/packed_weights.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

// Checks got against bias + w x in double, clamped, within the float sum's bound.
void expect_sum(float got, const std::vector<float>& w, const std::vector<float>& x, const float* bias, int64_t in,
                int64_t o, int64_t x_row, const OutputClamp& clamp) {
  double sum = bias != nullptr ? bias[o] : 0.0, magnitude = std::fabs(sum);
  for (int64_t i = 0; i < in; ++i) {
    const double term = static_cast<double>(w[static_cast<size_t>(o * in + i)]) * x[static_cast<size_t>(x_row + i)];
    sum += term;
    magnitude += std::fabs(term);
  }
  if (clamp.on) sum = std::min<double>(clamp.hi, std::max<double>(clamp.lo, sum));
  EXPECT_NEAR(got, sum, 1e-6 * (static_cast<double>(in) + 1) * magnitude + 1e-30) << "output " << o;
}

struct FewCase {
  int64_t positions, in, out;
  bool bias, rows_out;  // rows_out: y[p][o] (NHWC); else y[o][p] (NCHW)
};

std::vector<float> run_few(const FewCase& c) {
  const std::vector<float> w = uniform(static_cast<size_t>(c.out * c.in), 1);
  const std::vector<float> x = uniform(static_cast<size_t>(c.positions * c.in), 2, 2.0f);
  const std::vector<float> b = uniform(static_cast<size_t>(c.out), 3);
  const std::vector<float> p = packed(w, c.out, c.in);
  std::vector<float> y(static_cast<size_t>(c.positions * c.out), NAN);
  const int64_t y_position = c.rows_out ? c.out : 1, y_output = c.rows_out ? 1 : c.positions;
  few_position_product(c.positions, c.in, c.out, p.data(), x.data(), c.in, c.bias ? b.data() : nullptr, y.data(),
                       y_position, y_output);
  for (int64_t q = 0; q < c.positions; ++q) {
    SCOPED_TRACE("positions " + std::to_string(c.positions) + " in " + std::to_string(c.in) + " out " +
                 std::to_string(c.out) + " bias " + std::to_string(c.bias) + " rows " + std::to_string(c.rows_out) +
                 ": position " + std::to_string(q));
    for (int64_t o = 0; o < c.out; ++o) {
      expect_sum(y[static_cast<size_t>(q * y_position + o * y_output)], w, x, c.bias ? b.data() : nullptr, c.in, o,
                 q * c.in, OutputClamp{});
    }
  }
  return y;
}

const FewCase kFewCases[] = {
    {1, 1, 1, false, true},    {4, 7, 15, true, true},     {2, 33, 16, true, false},  {3, 33, 17, false, true},
    {4, 192, 70, true, false}, {4, 96, 64, true, true},    {1, 5, 130, true, false},  {3, 48, 200, false, false},
    {1, 300, 44, true, true},  {3, 24, 100, false, false}, {2, 40, 48, true, true},
};

TEST(FewPositionProduct, MatchesTheSumInDouble) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const FewCase& c : kFewCases) run_few(c);
}

TEST(FewPositionProduct, GivesOneThreadsBitsAtThreeThreads) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  // 4096 outputs of 8 inputs: several threads' shares of four-block groups.
  const FewCase big{4, 8, 4096, true, true};
  set_intra_op_threads(1);
  const std::vector<float> one = run_few(big);
  set_intra_op_threads(3);
  const std::vector<float> three = run_few(big);
  set_intra_op_threads(0);
  EXPECT_EQ(one, three);
}

struct TileCase {
  int64_t positions, in, out;
  bool bias;
  OutputClamp clamp;
  int64_t x_gap = 0, y_gap = 0;  // floats between rows past their length
};

// Runs a case; returns y (gaps included), checked against the sum in double, the gaps still NaN.
std::vector<float> run_tiles(const TileCase& c) {
  const int64_t x_position = c.in + c.x_gap, y_position = c.out + c.y_gap;
  const std::vector<float> w = uniform(static_cast<size_t>(c.out * c.in), 4);
  const std::vector<float> x = uniform(static_cast<size_t>(c.positions * x_position), 5, 2.0f);
  const std::vector<float> b = uniform(static_cast<size_t>(c.out), 6);
  const std::vector<float> p = packed(w, c.out, c.in);
  std::vector<float> y(static_cast<size_t>(c.positions * y_position), NAN);
  pointwise_product(c.positions, c.in, c.out, p.data(), x.data(), x_position, c.bias ? b.data() : nullptr, c.clamp,
                    y.data(), y_position);
  for (int64_t q = 0; q < c.positions; ++q) {
    SCOPED_TRACE("positions " + std::to_string(c.positions) + " in " + std::to_string(c.in) + " out " +
                 std::to_string(c.out) + " bias " + std::to_string(c.bias) + " clamp " + std::to_string(c.clamp.on) +
                 ": position " + std::to_string(q));
    for (int64_t o = 0; o < c.out; ++o) {
      expect_sum(y[static_cast<size_t>(q * y_position + o)], w, x, c.bias ? b.data() : nullptr, c.in, o,
                 q * x_position, c.clamp);
    }
    for (int64_t g = c.out; g < y_position; ++g) EXPECT_TRUE(std::isnan(y[static_cast<size_t>(q * y_position + g)]));
  }
  return y;
}

constexpr float kInfinity = std::numeric_limits<float>::infinity();
const OutputClamp kNone{}, kRelu{true, 0.0f, kInfinity}, kHardtanh{true, 0.0f, 6.0f};

// Rows: under a 4-row tile's count, between, exactly a tile of 6, 8 and 12, and past them (the last
// tile moved back); blocks: whole groups of four and 1, 2 and 3 left (outputs 16, 33, 48, 70, 96).
const TileCase kTileCases[] = {
    {5, 3, 16, true, kNone},       {6, 16, 64, true, kRelu},       {7, 16, 96, false, kHardtanh},
    {8, 33, 48, true, kNone},      {12, 24, 33, true, kHardtanh},  {13, 24, 70, true, kRelu},
    {25, 1, 17, false, kNone},     {64, 100, 144, true, kHardtanh}, {257, 16, 96, true, kNone, 3, 5},
    {100, 40, 240, false, kRelu, 0, 16},
};

TEST(PointwiseProduct, MatchesTheSumInDouble) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  for (const TileCase& c : kTileCases) run_tiles(c);
}

TEST(PointwiseProduct, ClampKeepsNaN) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  const int64_t positions = 7, in = 5, out = 20;
  std::vector<float> x = uniform(static_cast<size_t>(positions * in), 7), w = uniform(static_cast<size_t>(out * in), 8);
  x[3 * in + 2] = NAN;  // row 3
  const std::vector<float> p = packed(w, out, in);
  for (const OutputClamp& clamp : {kRelu, kHardtanh}) {
    std::vector<float> y(static_cast<size_t>(positions * out), 0.0f);
    pointwise_product(positions, in, out, p.data(), x.data(), in, nullptr, clamp, y.data(), out);
    for (int64_t q = 0; q < positions; ++q) {
      for (int64_t o = 0; o < out; ++o) {
        const float v = y[static_cast<size_t>(q * out + o)];
        if (q == 3) {
          EXPECT_TRUE(std::isnan(v)) << "output " << o;
        } else {
          EXPECT_TRUE(v >= clamp.lo && v <= clamp.hi) << "position " << q << " output " << o << ": " << v;
        }
      }
    }
  }
}

TEST(PointwiseProduct, GivesOneThreadsBitsAtThreeThreads) {
  if (!pointwise_product_available()) GTEST_SKIP() << "no AVX-512 on this CPU";
  // 64 blocks: threads take groups of blocks; 3 blocks over 200 rows and 6 over 100: threads take
  // rows (units of 8 and 12); 7 and 5 blocks over 16 rows, 10 over 49: too few rows to share, so
  // threads take blocks.
  for (const TileCase& c : {TileCase{50, 24, 1024, true, kRelu}, TileCase{200, 24, 48, true, kNone},
                            TileCase{100, 16, 96, false, kHardtanh}, TileCase{16, 480, 112, true, kNone},
                            TileCase{16, 40, 80, true, kHardtanh}, TileCase{49, 24, 160, false, kRelu}}) {
    set_intra_op_threads(1);
    const std::vector<float> one = run_tiles(c);
    set_intra_op_threads(3);
    const std::vector<float> three = run_tiles(c);
    set_intra_op_threads(0);
    EXPECT_EQ(std::memcmp(one.data(), three.data(), one.size() * sizeof(float)), 0) << "out " << c.out;
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
