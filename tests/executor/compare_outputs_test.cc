// Output comparison (docs/EXECUTOR.md, "Comparing outputs"): both tolerances must be exceeded to fail, NaN and
// infinity rules, the worst element and its index, strided inputs, dtype and shape checks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "io/compare_outputs.h"
#include "executor/runtime/reduced_float.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::exec {
namespace {

using testing::f32;

const float kNan = std::numeric_limits<float>::quiet_NaN();
const float kInf = std::numeric_limits<float>::infinity();

TEST(CompareOutputsTest, FailsOnlyWhenBothTolerancesAreExceeded) {
  // |diff| = 0.5: above atol 0.1, but within rtol 0.01 of 100.
  auto c = compare_tensors(f32({2}, {100.5f, 1.0f}), f32({2}, {100.0f, 1.0f}), Tolerance{0.1, 0.01});
  EXPECT_TRUE(c.ok);
  EXPECT_FLOAT_EQ(c.max_abs_error, 0.5);
  EXPECT_NEAR(c.max_rel_error, 0.005, 1e-12);
  // Within atol although far beyond rtol of a tiny expected value.
  c = compare_tensors(f32({1}, {2e-6f}), f32({1}, {1e-6f}));
  EXPECT_TRUE(c.ok);
  // Beyond both.
  c = compare_tensors(f32({3}, {1.0f, 2.0f, 3.0f}), f32({3}, {1.0f, 2.1f, 3.0f}));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.num_mismatched, 1);
  ASSERT_TRUE(c.has_worst);
  EXPECT_EQ(c.worst_index, (std::vector<int64_t>{1}));
  EXPECT_EQ(c.worst_got, "2");
  EXPECT_EQ(c.worst_expected, "2.0999999");
  EXPECT_NEAR(c.worst_abs_error, 0.1, 1e-6);
}

TEST(CompareOutputsTest, WorstElementIndexIsMultiDimensional) {
  auto c = compare_tensors(f32({2, 3}, {0, 0, 0, 0, 0, 5}), f32({2, 3}, {0, 0, 1, 0, 0, 0}));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.num_mismatched, 2);
  EXPECT_EQ(c.worst_index, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(index_text(c.worst_index), "[1, 2]");
  EXPECT_DOUBLE_EQ(c.max_abs_error, 5);
}

TEST(CompareOutputsTest, NanMatchesNanOnlyInTheSamePlace) {
  EXPECT_TRUE(compare_tensors(f32({2}, {kNan, 1}), f32({2}, {kNan, 1})).ok);
  auto c = compare_tensors(f32({2}, {kNan, 1}), f32({2}, {1, kNan}));
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.num_mismatched, 2);
  EXPECT_EQ(c.worst_got, "nan");
  EXPECT_TRUE(std::isinf(c.worst_abs_error));
  EXPECT_DOUBLE_EQ(c.max_abs_error, 0);  // only finite pairs count towards the maxima
}

TEST(CompareOutputsTest, InfinitiesMatchOnlyThemselves) {
  EXPECT_TRUE(compare_tensors(f32({2}, {kInf, -kInf}), f32({2}, {kInf, -kInf})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {kInf}), f32({1}, {-kInf})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {kInf}), f32({1}, {3.4e38f})).ok);
  EXPECT_FALSE(compare_tensors(f32({1}, {1}), f32({1}, {kInf})).ok);
}

TEST(CompareOutputsTest, StridedShapeAndDtype) {
  Tensor t = f32({2, 2}, {1, 2, 3, 4});
  Tensor transposed = t.as_strided({2, 2}, {1, 2}, 0);
  EXPECT_TRUE(compare_tensors(transposed, f32({2, 2}, {1, 3, 2, 4})).ok);
  auto shape = compare_tensors(t, f32({4}, {1, 2, 3, 4}));
  EXPECT_FALSE(shape.ok);
  EXPECT_NE(shape.problem.find("shape"), std::string::npos);
  auto dtype = compare_tensors(t, Tensor::empty(ScalarType::FLOAT64, {2, 2}));
  EXPECT_FALSE(dtype.ok);
  EXPECT_NE(dtype.problem.find("dtype f32"), std::string::npos) << dtype.problem;
}

TEST(CompareOutputsTest, IntegersBoolsAndEmpty) {
  Tensor a = Tensor::empty(ScalarType::INT64, {3});
  Tensor b = Tensor::empty(ScalarType::INT64, {3});
  for (int i = 0; i < 3; ++i) a.data<int64_t>()[i] = b.data<int64_t>()[i] = i;
  EXPECT_TRUE(compare_tensors(a, b).ok);
  b.data<int64_t>()[2] = 7;
  EXPECT_FALSE(compare_tensors(a, b).ok);
  Tensor x = Tensor::empty(ScalarType::BOOL, {2});
  Tensor y = Tensor::empty(ScalarType::BOOL, {2});
  x.data<uint8_t>()[1] = 1;
  EXPECT_FALSE(compare_tensors(x, y).ok);
  auto empty = compare_tensors(Tensor::empty(ScalarType::FLOAT32, {0, 4}), Tensor::empty(ScalarType::FLOAT32, {0, 4}));
  EXPECT_TRUE(empty.ok);
  EXPECT_FALSE(empty.has_worst);
}

TEST(CompareOutputsTest, Bfloat16AgainstFloat32OrBits) {
  Tensor got = Tensor::empty(ScalarType::BFLOAT16, {2});
  got.data<uint16_t>()[0] = float_to_bfloat16(1.5f);
  got.data<uint16_t>()[1] = float_to_bfloat16(-3.0f);
  EXPECT_TRUE(compare_tensors(got, f32({2}, {1.5f, -3.0f})).ok);
  EXPECT_FALSE(compare_tensors(got, f32({2}, {1.5f, -3.1f})).ok);
  Tensor bits = Tensor::empty(ScalarType::UINT16, {2});
  std::memcpy(bits.raw_data(), got.raw_data(), 4);
  EXPECT_TRUE(compare_tensors(got, bits).ok);
}

TEST(CompareOutputsTest, ComplexByModulus) {
  Tensor a = Tensor::empty(ScalarType::COMPLEX64, {1});
  Tensor b = Tensor::empty(ScalarType::COMPLEX64, {1});
  const float av[] = {3, 4}, bv[] = {3, 4.5f};
  std::memcpy(a.raw_data(), av, 8);
  std::memcpy(b.raw_data(), bv, 8);
  auto c = compare_tensors(a, b);
  EXPECT_FALSE(c.ok);
  EXPECT_DOUBLE_EQ(c.worst_abs_error, 0.5);
  EXPECT_EQ(c.worst_got, "3+4j");
}

}  // namespace
}  // namespace nrt::exec
