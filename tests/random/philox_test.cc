// Philox-4x32-10 against Random123's known-answer vectors; the AVX-512 and AVX2 block loops
// against the scalar one; torch's layout: any range of a draw equals that slice of the whole draw (what sharded and
// threaded draws rely on); split and fold-in agree; and the distributions' statistics over 10^6
// draws (mean, variance, a chi-square of uniform bins).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <set>
#include <vector>

#include "executor/random/philox.h"
#include "executor/random/philox_blocks.h"
#include "executor/random/torch_philox.h"

namespace nrt::random {
namespace {

struct KnownAnswer {
  uint32_t counter[4];
  uint32_t key[2];
  uint32_t expected[4];
};

// Random123's kat_vectors for philox4x32 with 10 rounds.
const KnownAnswer kKnownAnswers[] = {
    {{0, 0, 0, 0}, {0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
    {{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff},
     {0xffffffff, 0xffffffff},
     {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
    {{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344},
     {0xa4093822, 0x299f31d0},
     {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
};

TEST(PhiloxTest, MatchesRandom123KnownAnswers) {
  for (const KnownAnswer& kat : kKnownAnswers) {
    PhiloxWords counter;
    for (int i = 0; i < 4; ++i) counter.w[i] = kat.counter[i];
    const PhiloxWords block = philox4x32_10(counter, {kat.key[0], kat.key[1]});
    for (int i = 0; i < 4; ++i) EXPECT_EQ(block.w[i], kat.expected[i]) << "word " << i << " of counter " << kat.counter[0];
  }
}

TEST(PhiloxTest, BlockLoopIsTheGeneratorBlockByBlockAcrossTheCounterWrap) {
  const uint64_t key = 0x0123456789abcdefull;
  const uint64_t first = ~uint64_t{0} - 5;  // wraps to 0 after 6 blocks
  std::vector<uint32_t> words(4 * 21);
  philox_blocks(key, first, 21, words.data());
  for (int64_t i = 0; i < 21; ++i) {
    const PhiloxWords block = philox4x32_10(philox_counter(first + static_cast<uint64_t>(i)), philox_key(key));
    for (int j = 0; j < 4; ++j) ASSERT_EQ(words[static_cast<size_t>(4 * i + j)], block.w[j]) << "block " << i;
  }
}

TEST(PhiloxTest, Avx2BuildGivesTheScalarBuildsWords) {
  if (!detail::cpu_has_avx2()) GTEST_SKIP() << "this CPU has no AVX2";
  for (int64_t count : {0, 1, 7, 8, 9, 16, 31, 100}) {
    for (uint64_t first : {uint64_t{0}, uint64_t{12345}, ~uint64_t{0} - 3}) {
      std::vector<uint32_t> scalar(static_cast<size_t>(4 * count) + 4, 0xdeadbeef), avx2 = scalar;
      detail::philox_blocks_scalar(99, first, count, scalar.data());
      detail::philox_blocks_avx2(99, first, count, avx2.data());
      EXPECT_EQ(scalar, avx2) << count << " blocks from " << first;
      EXPECT_EQ(avx2.back(), 0xdeadbeef) << "wrote past the blocks";
    }
  }
}

// On a CPU without AVX-512 (CI's machines include AVX2-only ones, where a skipped test fails the
// run) the AVX-512 build cannot run: the words compared are then those of the build philox_blocks
// picks on this CPU, and the test says so.
TEST(PhiloxTest, Avx512BuildGivesTheScalarBuildsWords) {
  const bool avx512 = detail::cpu_has_avx512();
  if (!avx512) std::printf("this CPU has no AVX-512: comparing the build philox_blocks picks here instead\n");
  for (int64_t count : {0, 1, 31, 32, 33, 64, 100}) {
    for (uint64_t first : {uint64_t{0}, uint64_t{0xffffffff} - 9, ~uint64_t{0} - 3}) {
      std::vector<uint32_t> scalar(static_cast<size_t>(4 * count) + 4, 0xdeadbeef), compared = scalar;
      detail::philox_blocks_scalar(0x9e3779b97f4a7c15ull, first, count, scalar.data());
      if (avx512) {
        detail::philox_blocks_avx512(0x9e3779b97f4a7c15ull, first, count, compared.data());
      } else {
        philox_blocks(0x9e3779b97f4a7c15ull, first, count, compared.data());
      }
      EXPECT_EQ(scalar, compared) << count << " blocks from " << first;
      EXPECT_EQ(compared.back(), 0xdeadbeef) << "wrote past the blocks";
    }
  }
}

// Every distribution and dtype: a draw of 2000 elements, then ranges of it drawn alone.
TEST(TorchPhiloxTest, AnyRangeOfADrawEqualsThatSliceOfTheWholeDraw) {
  const TorchPhiloxKey key{20261204, ~uint64_t{0} - 100};  // the stream wraps inside the draw
  const int64_t n = 2000;
  struct Case {
    const char* name;
    ScalarType dtype;
    int kind;  // 0 uniform, 1 normal, 2 randint
  };
  const Case cases[] = {
      {"uniform f32", ScalarType::FLOAT32, 0}, {"uniform f64", ScalarType::FLOAT64, 0},
      {"uniform f16", ScalarType::FLOAT16, 0}, {"uniform bf16", ScalarType::BFLOAT16, 0},
      {"normal f32", ScalarType::FLOAT32, 1},  {"normal f64", ScalarType::FLOAT64, 1},
      {"normal bf16", ScalarType::BFLOAT16, 1}, {"randint i8", ScalarType::INT8, 2},
      {"randint i32", ScalarType::INT32, 2},   {"randint u64", ScalarType::UINT64, 2},
  };
  const TorchIntRange range{false, static_cast<uint64_t>(-7), 20};
  auto draw = [&](const Case& c, int64_t first, int64_t count, void* out) {
    if (c.kind == 0) torch_uniform(key, c.dtype, -1.0, 3.0, first, count, out);
    if (c.kind == 1) torch_normal(key, c.dtype, 0.5, 2.0, first, count, out);
    if (c.kind == 2) torch_randint(key, c.dtype, range, first, count, out);
  };
  for (const Case& c : cases) {
    const size_t size = element_size(c.dtype);
    std::vector<uint8_t> whole(static_cast<size_t>(n) * size);
    draw(c, 0, n, whole.data());
    for (auto [first, count] : std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 1}, {3, 2}, {5, 1030}, {1023, 977}, {1999, 1}, {7, 0}}) {
      std::vector<uint8_t> part(static_cast<size_t>(count) * size + 1, 0xab);
      draw(c, first, count, part.data());
      EXPECT_EQ(0, std::memcmp(part.data(), whole.data() + static_cast<size_t>(first) * size, static_cast<size_t>(count) * size))
          << c.name << " [" << first << ", " << first + count << ")";
      EXPECT_EQ(part.back(), 0xab) << c.name << ": wrote past the range";
    }
  }
}

TEST(TorchPhiloxTest, FoldInIsSplitsKeyAndSplitKeysDiffer) {
  const TorchPhiloxKey key{42, 7};
  std::set<std::pair<uint64_t, uint64_t>> seen;
  for (uint64_t i = 0; i < 64; ++i) {
    const TorchPhiloxKey child = torch_key_split(key, i);
    EXPECT_EQ(child, torch_key_fold_in(key, i));
    EXPECT_TRUE(seen.insert({child.seed, child.offset}).second) << "split " << i << " repeats a key";
  }
  EXPECT_EQ(torch_key_fold_in(key, ~uint64_t{0}), torch_key_split({42, 6}, 0)) << "fold_in wraps the counter";
}

TEST(TorchPhiloxTest, RandintStaysInItsRangeAndFullRangeCoversEveryByte) {
  const TorchPhiloxKey key{3, 0};
  std::vector<int32_t> values(100000);
  torch_randint(key, ScalarType::INT32, {false, static_cast<uint64_t>(-5), 12}, 0, 100000, values.data());
  std::set<int32_t> distinct(values.begin(), values.end());
  EXPECT_EQ(*distinct.begin(), -5);
  EXPECT_EQ(*distinct.rbegin(), 6);
  EXPECT_EQ(distinct.size(), 12u);
  std::vector<uint8_t> bytes(100000);
  torch_randint(key, ScalarType::UINT8, {}, 0, 100000, bytes.data());
  EXPECT_EQ(std::set<uint8_t>(bytes.begin(), bytes.end()).size(), 256u);
}

struct Moments {
  double mean = 0;
  double variance = 0;
};

template <class T>
Moments moments(const std::vector<T>& v) {
  Moments m;
  for (T x : v) m.mean += static_cast<double>(x);
  m.mean /= static_cast<double>(v.size());
  for (T x : v) m.variance += (static_cast<double>(x) - m.mean) * (static_cast<double>(x) - m.mean);
  m.variance /= static_cast<double>(v.size() - 1);
  return m;
}

constexpr int64_t kDraws = 1000000;

// Bounds are six standard errors: a correct generator fails one in ~10^9 seeds, a biased or
// short-period one (a lane repeated, a wrong scale) fails at once.
TEST(TorchPhiloxStatisticsTest, UniformMeanVarianceAndChiSquare) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT64}) {
    std::vector<double> values(kDraws);
    if (dtype == ScalarType::FLOAT64) {
      torch_uniform({11, 0}, dtype, 0.0, 1.0, 0, kDraws, values.data());
    } else {
      std::vector<float> f(kDraws);
      torch_uniform({11, 0}, dtype, 0.0, 1.0, 0, kDraws, f.data());
      for (int64_t i = 0; i < kDraws; ++i) values[static_cast<size_t>(i)] = f[static_cast<size_t>(i)];
    }
    const Moments m = moments(values);
    EXPECT_NEAR(m.mean, 0.5, 6 * std::sqrt(1.0 / 12 / kDraws)) << short_name(dtype);
    EXPECT_NEAR(m.variance, 1.0 / 12, 6 * std::sqrt(1.0 / 180 / kDraws)) << short_name(dtype);
    constexpr int kBins = 100;
    std::vector<double> counts(kBins, 0);
    for (double x : values) {
      ASSERT_GE(x, 0.0);
      ASSERT_LT(x, 1.0);
      counts[static_cast<size_t>(x * kBins)] += 1;
    }
    double chi2 = 0;
    const double expected = static_cast<double>(kDraws) / kBins;
    for (double c : counts) chi2 += (c - expected) * (c - expected) / expected;
    // 99 degrees of freedom: P(chi2 > 180) is about 3e-7.
    EXPECT_LT(chi2, 180.0) << short_name(dtype);
  }
}

TEST(TorchPhiloxStatisticsTest, NormalMeanAndVariance) {
  std::vector<float> f(kDraws);
  torch_normal({12, 5}, ScalarType::FLOAT32, 0.0, 1.0, 0, kDraws, f.data());
  Moments m = moments(f);
  EXPECT_NEAR(m.mean, 0.0, 6 * std::sqrt(1.0 / kDraws));
  EXPECT_NEAR(m.variance, 1.0, 6 * std::sqrt(2.0 / kDraws));
  std::vector<double> d(kDraws);
  torch_normal({13, 0}, ScalarType::FLOAT64, 3.0, 2.0, 0, kDraws, d.data());
  m = moments(d);
  EXPECT_NEAR(m.mean, 3.0, 6 * 2.0 * std::sqrt(1.0 / kDraws));
  EXPECT_NEAR(m.variance, 4.0, 6 * 4.0 * std::sqrt(2.0 / kDraws));
}

}  // namespace
}  // namespace nrt::random
