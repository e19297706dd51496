// Copies and element-wise maps across transposed layouts (executor/kernels/cpu/batched_transpose.h):
// which stride pairs are a batch of transposes, copies of transposed views against an
// index-by-index reading at 1 and 3 threads, binary maps whose operand is laid out as the
// transpose of the output (the output aliasing the other operand included), maps and copies over
// random pairs of dense layouts, and attention over contiguous keys (their rows transposed for the
// small products) against the sum in double.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "executor/kernels/cpu/batched_transpose.h"
#include "executor/kernels/cpu/elementwise_loops.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/kernel.h"
#include "tests/kernels/uniform_floats.h"

namespace nrt::exec::cpu {
namespace {

std::vector<int64_t> bytes(std::vector<int64_t> element_strides) {
  for (int64_t& s : element_strides) s *= 4;
  return element_strides;
}

// A float tensor of `sizes` whose memory holds uniform values, viewed with `strides`.
Tensor filled(const std::vector<int64_t>& sizes, const std::vector<int64_t>& strides, unsigned seed) {
  int64_t count = 1;
  for (int64_t s : sizes) count *= s;
  Tensor backing = Tensor::empty(ScalarType::FLOAT32, {count});
  const std::vector<float> values = uniform(static_cast<size_t>(count), seed);
  std::memcpy(backing.data<float>(), values.data(), values.size() * sizeof(float));
  return backing.as_strided(sizes, strides, 0);
}

// Element `index` (row-major over t's sizes) of t, read through its strides.
float at(const Tensor& t, int64_t index) {
  int64_t offset = t.storage_offset();
  for (size_t d = t.sizes().size(); d-- > 0;) {
    offset += (index % t.sizes()[d]) * t.strides()[d];
    index /= t.sizes()[d];
  }
  return reinterpret_cast<const float*>(t.storage()->data())[offset];
}

TEST(BatchedTranspose, FindsTransposedPairsTheRegisterTransposeTakes) {
  if (!transposes_floats(8, 8)) GTEST_SKIP() << "no AVX2 on this CPU";
  // [64, 128] read from its transpose's memory: the source holds 128 rows of 64.
  auto found = batched_transpose(std::vector<int64_t>{64, 128}, bytes({128, 1}), bytes({1, 64}));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->batches, 1);
  EXPECT_EQ(found->rows, 128);
  EXPECT_EQ(found->columns, 64);
  // The other way round, batched, size-1 dimensions ignored.
  found = batched_transpose(std::vector<int64_t>{3, 1, 24, 40}, bytes({960, 960, 1, 24}), bytes({960, 960, 40, 1}));
  ASSERT_TRUE(found);
  EXPECT_EQ(found->batches, 3);
  EXPECT_EQ(found->rows, 24);
  EXPECT_EQ(found->columns, 40);
  // Only the columns whole blocks of 8.
  EXPECT_TRUE(batched_transpose(std::vector<int64_t>{16, 13}, bytes({13, 1}), bytes({1, 16})));
  // Not transposes: the same layout, a broadcast side, batches apart by more than a matrix,
  // neither side whole blocks of 8.
  EXPECT_FALSE(batched_transpose(std::vector<int64_t>{64, 128}, bytes({128, 1}), bytes({128, 1})));
  EXPECT_FALSE(batched_transpose(std::vector<int64_t>{64, 128}, bytes({128, 1}), bytes({0, 1})));
  EXPECT_FALSE(batched_transpose(std::vector<int64_t>{2, 16, 16}, bytes({256, 16, 1}), bytes({512, 1, 16})));
  EXPECT_FALSE(batched_transpose(std::vector<int64_t>{5, 7}, bytes({7, 1}), bytes({1, 5})));
}

TEST(BatchedTranspose, CopiesOfTransposedViewsHoldEveryElement) {
  struct Case {
    std::vector<int64_t> sizes, strides;  // a transposed view of a dense tensor
  };
  const Case cases[] = {
      {{64, 128}, {1, 64}},            // whisper's layer-norm input
      {{13, 16}, {1, 13}},             // only the columns whole blocks of 8
      {{3, 24, 40}, {960, 1, 24}},     // a batch
      {{2, 4, 64, 32}, {8192, 32, 128, 1}},  // not a transpose of the last two: rows copied as they are
      {{5, 7}, {1, 5}},                // neither side whole blocks of 8: the element loop
  };
  for (const Case& c : cases) {
    for (const int threads : {1, 3}) {
      set_intra_op_threads(threads);
      const Tensor view = filled(c.sizes, c.strides, 7);
      const Tensor copy = contiguous_as(view, ScalarType::FLOAT32);
      ASSERT_TRUE(copy.is_contiguous());
      for (int64_t i = 0; i < view.numel(); ++i) {
        ASSERT_EQ(copy.data<float>()[i], at(view, i)) << "element " << i << ", " << threads << " threads";
      }
      // Into a destination laid out as the view, from a contiguous source.
      const Tensor back = filled(c.sizes, c.strides, 8);
      ASSERT_TRUE(copy_into(back, copy));
      for (int64_t i = 0; i < view.numel(); ++i) ASSERT_EQ(at(back, i), copy.data<float>()[i]) << "element " << i;
    }
  }
  set_intra_op_threads(0);
}

TEST(BatchedTranspose, MapsReadAnOperandLaidOutAsTheOutputsTranspose) {
  // The output and `a` laid out transposed (torch's residual stream), `b` row-major (a product's
  // result); then the output aliasing `a` (an in-place add).
  const std::vector<int64_t> sizes = {2, 64, 128}, transposed = {8192, 1, 64};
  for (const bool in_place : {false, true}) {
    for (const int threads : {1, 3}) {
      set_intra_op_threads(threads);
      const Tensor a = filled(sizes, transposed, 1);
      const Tensor b = filled(sizes, {8192, 128, 1}, 2);
      std::vector<float> expected(static_cast<size_t>(a.numel()));
      for (int64_t i = 0; i < a.numel(); ++i) expected[static_cast<size_t>(i)] = at(a, i) * 2.0f - at(b, i);
      const Tensor out = in_place ? a : filled(sizes, transposed, 3);
      map_binary<float, float, float>(out, a, b, [](float x, float y) { return x * 2.0f - y; });
      for (int64_t i = 0; i < a.numel(); ++i) {
        ASSERT_EQ(at(out, i), expected[static_cast<size_t>(i)]) << "element " << i << (in_place ? ", in place" : "");
      }
      // A row-major output with the transposed operand second.
      const Tensor row_major = Tensor::empty(ScalarType::FLOAT32, sizes);
      map_binary<float, float, float>(row_major, b, filled(sizes, transposed, 4), [](float x, float y) { return x - y; });
      const Tensor second = filled(sizes, transposed, 4);
      for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(row_major.data<float>()[i], at(b, i) - at(second, i));
    }
  }
  set_intra_op_threads(0);
}

// Every pair of dense layouts (each a permutation of a row-major one) of shapes up to 4-D, sizes
// that are and are not whole blocks of 8: maps and copies give what an index-by-index reading gives,
// whichever path (register transposes or the element loops) takes them.
TEST(BatchedTranspose, AnyPairOfDenseLayoutsGivesTheIndexByIndexResult) {
  std::mt19937 random(5);
  const int64_t choices[] = {1, 2, 3, 8, 13, 16, 24};
  for (int trial = 0; trial < 300; ++trial) {
    const int rank = 2 + static_cast<int>(random() % 3);
    std::vector<int64_t> sizes(static_cast<size_t>(rank));
    for (int64_t& s : sizes) s = choices[random() % std::size(choices)];
    // A dense layout whose dimensions are ordered in memory by `order` (outermost first).
    auto permuted = [&](unsigned seed) {
      std::vector<size_t> order(sizes.size());
      for (size_t d = 0; d < order.size(); ++d) order[d] = d;
      std::shuffle(order.begin(), order.end(), std::mt19937(seed));
      std::vector<int64_t> strides(sizes.size());
      int64_t step = 1;
      for (size_t k = order.size(); k-- > 0;) {
        strides[order[k]] = step;
        step *= sizes[order[k]];
      }
      return filled(sizes, strides, seed);
    };
    const Tensor a = permuted(random()), b = permuted(random()), out = permuted(random());
    SCOPED_TRACE("trial " + std::to_string(trial) + ": " + std::to_string(a.numel()) + " elements");
    map_binary<float, float, float>(out, a, b, [](float x, float y) { return x - 3.0f * y; });
    for (int64_t i = 0; i < out.numel(); ++i) ASSERT_EQ(at(out, i), at(a, i) - 3.0f * at(b, i)) << "element " << i;
    const Tensor copy = permuted(random());
    ASSERT_TRUE(copy_into(copy, a));
    for (int64_t i = 0; i < a.numel(); ++i) ASSERT_EQ(at(copy, i), at(a, i)) << "element " << i;
  }
}

TEST(BatchedTranspose, AttentionOverRowMajorKeysMatchesTheSumInDouble) {
  // 2 heads of 16 queries and 24 keys of 8 features: small products, the keys' rows transposed.
  const int64_t H = 2, L = 16, S = 24, E = 8;
  const Tensor q = filled({1, H, L, E}, {H * L * E, L * E, E, 1}, 11);
  const Tensor k = filled({1, H, S, E}, {H * S * E, S * E, E, 1}, 12);
  const Tensor v = filled({1, H, S, E}, {H * S * E, S * E, E, 1}, 13);
  const KernelInfo* info = KernelRegistry::global().find("aten::scaled_dot_product_attention.default", DeviceKind::kCpu);
  ASSERT_NE(info, nullptr);
  const RuntimeValue qv = q, kv = k, vv = v;
  const NamedValue inputs[] = {{"query", &qv}, {"key", &kv}, {"value", &vv}};
  std::vector<RuntimeValue> outputs(1);
  KernelContext ctx("aten::scaled_dot_product_attention.default", inputs, outputs, Device{});
  ASSERT_TRUE(info->fn(ctx).ok());
  const Tensor& out = std::get<Tensor>(outputs[0]);
  const double scale = 1.0 / std::sqrt(static_cast<double>(E));
  for (int64_t h = 0; h < H; ++h) {
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> weights(static_cast<size_t>(S));
      double top = -INFINITY, total = 0.0;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0.0;
        for (int64_t e = 0; e < E; ++e) dot += double{at(q, (h * L + i) * E + e)} * at(k, (h * S + j) * E + e);
        weights[static_cast<size_t>(j)] = dot * scale;
        top = std::max(top, dot * scale);
      }
      for (double& w : weights) total += (w = std::exp(w - top));
      for (int64_t e = 0; e < E; ++e) {
        double expected = 0.0;
        for (int64_t j = 0; j < S; ++j) expected += weights[static_cast<size_t>(j)] / total * at(v, (h * S + j) * E + e);
        ASSERT_NEAR(at(out, (h * L + i) * E + e), expected, 1e-6) << "head " << h << ", query " << i << ", feature " << e;
      }
    }
  }
}

}  // namespace
}  // namespace nrt::exec::cpu
