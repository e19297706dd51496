// The seeded random ops through the executor (executor/kernels/cpu/seeded_random_kernels.cc):
// the same program with its nodes in another file order draws the same bits; the seed changes
// every draw, two nodes of one op draw differently, repeated runs repeat; the documented key
// (fold_in(key(seed), FNV-1a of "graph/node")) is what rand draws with; and over 10^6 elements
// the distributions hold: uniform and normal moments, dropout keeps 1 - p and scales by
// 1 / (1 - p) with its mask, bernoulli's rate, randint's range, normal around a tensor mean.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include "executor/random/torch_philox.h"
#include "executor/runtime/op_facts.h"
#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::Tensor;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

constexpr int64_t kN = 1000000;

// main(x: f32[kN]) -> rand, rand (a second node), randn f64, native_dropout (out, mask),
// randint.low, bernoulli.p, normal.Tensor_float. `reversed` writes the independent nodes in the
// opposite file order.
ProgramWithWeights draws_program(bool reversed) {
  ProgramBuilder p("seeded_random_test");
  const uint32_t rand = p.op("aten::rand", "default");
  const uint32_t randn = p.op("aten::randn", "default");
  const uint32_t dropout = p.op("aten::native_dropout", "default");
  const uint32_t randint = p.op("aten::randint", "low");
  const uint32_t bernoulli = p.op("aten::bernoulli", "p");
  const uint32_t normal = p.op("aten::normal", "Tensor_float");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {kN});
  g.user_input(arg::tensor(x));
  const uint32_t u = g.tensor("u", ScalarType::FLOAT32, {kN});
  const uint32_t u2 = g.tensor("u2", ScalarType::FLOAT32, {kN});
  const uint32_t z = g.tensor("z", ScalarType::FLOAT64, {kN});
  const uint32_t kept = g.tensor("kept", ScalarType::FLOAT32, {kN});
  const uint32_t mask = g.tensor("mask", ScalarType::BOOL, {kN});
  const uint32_t ints = g.tensor("ints", ScalarType::INT64, {kN});
  const uint32_t coin = g.tensor("coin", ScalarType::FLOAT32, {kN});
  const uint32_t around = g.tensor("around", ScalarType::FLOAT32, {kN});
  std::vector<std::function<void()>> nodes = {
      [&] { g.node("u", rand, Args{{"size", arg::integers({kN})}}, {}, {arg::tensor(u)}); },
      [&] { g.node("u2", rand, Args{{"size", arg::integers({kN})}}, {}, {arg::tensor(u2)}); },
      [&] {
        g.node("z", randn, Args{{"size", arg::integers({kN})}}, {{"dtype", arg::scalar_type(ScalarType::FLOAT64)}},
               {arg::tensor(z)});
      },
      [&] {
        g.node("drop", dropout, Args{{"input", arg::tensor(x)}, {"p", arg::real(0.3)}, {"train", arg::boolean(true)}}, {},
               {arg::tensor(kept), arg::tensor(mask)});
      },
      [&] {
        g.node("ints", randint, Args{{"low", arg::integer(-5)}, {"high", arg::integer(7)}, {"size", arg::integers({kN})}},
               {}, {arg::tensor(ints)});
      },
      [&] { g.node("coin", bernoulli, Args{{"self", arg::tensor(x)}, {"p", arg::real(0.25)}}, {}, {arg::tensor(coin)}); },
      [&] { g.node("around", normal, Args{{"mean", arg::tensor(x)}, {"std", arg::real(2.0)}}, {}, {arg::tensor(around)}); },
  };
  if (reversed) std::reverse(nodes.begin(), nodes.end());
  for (auto& node : nodes) node();
  for (uint32_t out : {u, u2, z, kept, mask, ints, coin, around}) g.user_output(arg::tensor(out));
  return p.finish();
}

using Outputs = std::map<std::string, Tensor>;

Outputs run(bool reversed, uint64_t seed) {
  auto file = verify_in_memory(draws_program(reversed));
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  exec::ExecutorOptions options;
  options.seed = seed;
  auto executor = Executor::load(std::move(*file), options);
  EXPECT_TRUE(executor.ok()) << (executor.ok() ? "" : executor.error().to_string());
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {kN});
  for (int64_t i = 0; i < kN; ++i) x.data<float>()[i] = 1.0f;
  auto outputs = (*executor)->run({{"x", x}});
  EXPECT_TRUE(outputs.ok()) << (outputs.ok() ? "" : outputs.error().to_string());
  Outputs named;
  for (auto& out : *outputs) named[out.name] = std::get<Tensor>(out.value);
  return named;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.sizes() == b.sizes() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

class SeededRandomTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { seven_ = new Outputs(run(false, 7)); }
  static void TearDownTestSuite() { delete seven_; }
  static Outputs* seven_;
};
Outputs* SeededRandomTest::seven_ = nullptr;

TEST_F(SeededRandomTest, AnotherNodeOrderAndAnotherRunDrawTheSameBits) {
  const Outputs reordered = run(true, 7);
  const Outputs again = run(false, 7);
  ASSERT_EQ(seven_->size(), 8u);
  for (const auto& [name, tensor] : *seven_) {
    EXPECT_TRUE(same_bits(tensor, reordered.at(name))) << name << " changed with the node order";
    EXPECT_TRUE(same_bits(tensor, again.at(name))) << name << " changed between runs";
  }
}

TEST_F(SeededRandomTest, TheSeedChangesEveryDrawAndTwoNodesDrawDifferently) {
  const Outputs eight = run(false, 8);
  for (const auto& [name, tensor] : *seven_) EXPECT_FALSE(same_bits(tensor, eight.at(name))) << name;
  EXPECT_FALSE(same_bits(seven_->at("u"), seven_->at("u2"))) << "two rand nodes drew the same numbers";
}

// docs/RANDOM.md: a node's key is fold_in(key(seed), FNV-1a 64 of "<graph>/<node>"), and rand
// draws torch's float32 uniform layout from it.
TEST_F(SeededRandomTest, RandDrawsWithTheDocumentedKey) {
  uint64_t stream = 0xcbf29ce484222325ull;
  for (char c : std::string("main/u")) {
    stream ^= static_cast<unsigned char>(c);
    stream *= 0x100000001b3ull;
  }
  const random::TorchPhiloxKey key = random::torch_key_fold_in({7, 0}, stream);
  Tensor expected = Tensor::empty(ScalarType::FLOAT32, {kN});
  random::torch_uniform(key, ScalarType::FLOAT32, 0.0, 1.0, 0, kN, expected.raw_data());
  EXPECT_TRUE(same_bits(seven_->at("u"), expected));
}

double mean_of(const Tensor& t) {
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    sum += t.dtype() == ScalarType::FLOAT64 ? t.data<double>()[i] : static_cast<double>(t.data<float>()[i]);
  }
  return sum / static_cast<double>(t.numel());
}

double variance_of(const Tensor& t, double mean) {
  double sum = 0;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const double v = t.dtype() == ScalarType::FLOAT64 ? t.data<double>()[i] : t.data<float>()[i];
    sum += (v - mean) * (v - mean);
  }
  return sum / static_cast<double>(t.numel() - 1);
}

// Bounds of six standard errors.
TEST_F(SeededRandomTest, DistributionsHoldOverAMillionDraws) {
  const double n = static_cast<double>(kN);
  const Tensor& u = seven_->at("u");
  EXPECT_NEAR(mean_of(u), 0.5, 6 * std::sqrt(1.0 / 12 / n));
  EXPECT_NEAR(variance_of(u, 0.5), 1.0 / 12, 6 * std::sqrt(1.0 / 180 / n));
  const Tensor& z = seven_->at("z");
  EXPECT_NEAR(mean_of(z), 0.0, 6 * std::sqrt(1.0 / n));
  EXPECT_NEAR(variance_of(z, 0.0), 1.0, 6 * std::sqrt(2.0 / n));

  const Tensor& kept = seven_->at("kept");
  const Tensor& mask = seven_->at("mask");
  int64_t kept_count = 0;
  for (int64_t i = 0; i < kN; ++i) {
    const bool k = mask.data<bool>()[i];
    kept_count += k;
    ASSERT_EQ(kept.data<float>()[i], k ? static_cast<float>(1.0 / 0.7) : 0.0f) << "element " << i;
  }
  EXPECT_NEAR(static_cast<double>(kept_count) / n, 0.7, 6 * std::sqrt(0.7 * 0.3 / n));

  const Tensor& coin = seven_->at("coin");
  std::set<float> faces;
  for (int64_t i = 0; i < kN; ++i) faces.insert(coin.data<float>()[i]);
  EXPECT_EQ(faces, (std::set<float>{0.0f, 1.0f}));
  EXPECT_NEAR(mean_of(coin), 0.25, 6 * std::sqrt(0.25 * 0.75 / n));

  const Tensor& ints = seven_->at("ints");
  std::map<int64_t, int64_t> counts;
  for (int64_t i = 0; i < kN; ++i) counts[ints.data<int64_t>()[i]]++;
  ASSERT_EQ(counts.size(), 12u);
  EXPECT_EQ(counts.begin()->first, -5);
  EXPECT_EQ(counts.rbegin()->first, 6);
  for (const auto& [value, count] : counts) EXPECT_NEAR(static_cast<double>(count) / n, 1.0 / 12, 6 * std::sqrt(1.0 / 12 / n)) << value;

  const Tensor& around = seven_->at("around");  // mean 1, std 2
  EXPECT_NEAR(mean_of(around), 1.0, 6 * 2 * std::sqrt(1.0 / n));
  EXPECT_NEAR(variance_of(around, 1.0), 4.0, 6 * 4 * std::sqrt(2.0 / n));
}

// main() -> rand([n]) where the node carries a sharded draw's region (as the sharding pass writes
// it: global sizes, then per dim the count of ranges and each range's offset and size).
Result<std::vector<Tensor>> run_region(int64_t local, std::vector<int64_t> global, std::vector<int64_t> pieces) {
  ProgramBuilder p("seeded_random_test: region");
  const uint32_t rand = p.op("aten::rand", "default");
  auto g = p.graph("main", true);
  const uint32_t u = g.tensor("u", ScalarType::FLOAT32, {local});
  g.node("u", rand, Args{{"size", arg::integers({local})}},
         {{exec::kDrawGlobalSizesArg, arg::integers(std::move(global))}, {exec::kDrawShardPiecesArg, arg::integers(std::move(pieces))}},
         {arg::tensor(u)});
  g.user_output(arg::tensor(u));
  NRT_TRY(file, verify_in_memory(p.finish()));
  exec::ExecutorOptions options;
  options.seed = 7;
  NRT_TRY(executor, Executor::load(std::move(*file), options));
  NRT_TRY(outputs, (*executor)->run({}));
  std::vector<Tensor> tensors;
  for (auto& out : *outputs) tensors.push_back(std::get<Tensor>(out.value));
  return tensors;
}

// A region draws exactly its elements of the whole draw; a region the file gets wrong is an
// error naming it, never a read or write out of bounds.
TEST(SeededRandomRegionTest, ARegionDrawsItsSliceAndABadRegionIsAnError) {
  auto whole = run_region(10, {10}, {1, 0, 10});
  ASSERT_TRUE(whole.ok()) << whole.error().to_string();
  auto part = run_region(4, {10}, {2, 1, 2, 6, 2});  // elements 1, 2, 6, 7
  ASSERT_TRUE(part.ok()) << part.error().to_string();
  const float* w = (*whole)[0].data<float>();
  const float* s = (*part)[0].data<float>();
  EXPECT_EQ(std::vector<float>(s, s + 4), (std::vector<float>{w[1], w[2], w[6], w[7]}));
  for (auto [local, global, pieces, words] :
       std::vector<std::tuple<int64_t, std::vector<int64_t>, std::vector<int64_t>, std::string>>{
           {4, {10}, {1, 8, 4}, "lies outside dim 0"},
           {4, {10}, {1, 0, 3}, "hold 3 elements"},
           {4, {10}, {5, 0, 4}, "malformed"},
           {4, {10}, {}, "truncated"},
           {4, {2, 2}, {1, 0, 2}, "do not match"},
       }) {
    auto bad = run_region(local, global, pieces);
    ASSERT_FALSE(bad.ok()) << words;
    EXPECT_NE(bad.error().message.find(words), std::string::npos) << bad.error().to_string();
  }
}

}  // namespace
}  // namespace nrt::testing
