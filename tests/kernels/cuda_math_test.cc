// The CUDA kernels' math, written once for the device and the host (executor/kernels/cuda/
// elementwise_math.h, strided_indexer.h), checked on the host of every machine: each function
// against the CPU kernel of the same target, and the strided walk against the CPU's own.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "executor/kernels/cuda/elementwise_math.h"
#include "executor/kernels/cuda/strided_indexer.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec::cuda {
namespace {

// The CPU kernel's float32 output of `target` on `values`.
std::vector<float> cpu_unary(const std::string& target, const std::vector<float>& values,
                             std::vector<std::pair<std::string, RuntimeValue>> extra = {}) {
  Tensor x = Tensor::empty(ScalarType::FLOAT32, {static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) x.data<float>()[i] = values[i];
  std::vector<std::pair<std::string, RuntimeValue>> args{{"self", x}};
  for (auto& e : extra) args.push_back(e);
  std::vector<NamedValue> inputs;
  for (const auto& [name, value] : args) inputs.push_back({name, &value});
  std::vector<RuntimeValue> out(1);
  KernelContext ctx(target, inputs, out, Device{});
  const KernelInfo* info = KernelRegistry::global().find(target, DeviceKind::kCpu);
  EXPECT_NE(info, nullptr) << target;
  if (info == nullptr) return {};
  EXPECT_TRUE(info->fn(ctx).ok()) << target;
  const Tensor& y = std::get<Tensor>(out[0]);
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

std::vector<float> samples() {
  std::vector<float> v{0.0f, -0.0f, 1.0f, -1.0f, 3.5f, -7.25f, 20.0f, -20.0f, 1e-4f, NAN, INFINITY, -INFINITY};
  for (int i = -40; i <= 40; ++i) v.push_back(static_cast<float>(i) * 0.173f);
  return v;
}

void expect_matches(const std::string& target, UnaryOp op, double tol,
                    std::vector<std::pair<std::string, RuntimeValue>> extra = {}) {
  SCOPED_TRACE(target);
  const auto x = samples();
  const auto cpu = cpu_unary(target, x, extra);
  ASSERT_EQ(cpu.size(), x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const float device = apply_unary<float>(op, x[i]);
    if (std::isnan(cpu[i]) || std::isnan(device)) {
      EXPECT_EQ(std::isnan(cpu[i]), std::isnan(device)) << "x = " << x[i];
    } else if (std::isinf(cpu[i]) || std::isinf(device)) {
      EXPECT_EQ(cpu[i], device) << "x = " << x[i];
    } else {
      EXPECT_LE(std::fabs(cpu[i] - device), tol * (1 + std::fabs(cpu[i]))) << "x = " << x[i];
    }
  }
}

TEST(CudaMath, UnaryFunctionsMatchTheCpuKernels) {
  expect_matches("aten::relu.default", UnaryOp::kRelu, 0);
  expect_matches("aten::neg.default", UnaryOp::kNeg, 0);
  expect_matches("aten::abs.default", UnaryOp::kAbs, 0);
  expect_matches("aten::gelu.default", UnaryOp::kGelu, 1e-6);
  expect_matches("aten::gelu.default", UnaryOp::kGeluTanh, 1e-6, {{"approximate", std::string("tanh")}});
  expect_matches("aten::tanh.default", UnaryOp::kTanh, 1e-6);
  expect_matches("aten::sigmoid.default", UnaryOp::kSigmoid, 1e-6);
  expect_matches("aten::silu.default", UnaryOp::kSilu, 1e-6);
  expect_matches("aten::exp.default", UnaryOp::kExp, 1e-6);
  expect_matches("aten::sin.default", UnaryOp::kSin, 1e-6);
  expect_matches("aten::erf.default", UnaryOp::kErf, 1e-6);
}

TEST(CudaMath, BinaryRulesAreTorchs) {
  EXPECT_TRUE(std::isnan(apply_binary<float>(BinaryOp::kMaximum, NAN, 1.0f, 1.0f)));
  EXPECT_TRUE(std::isnan(apply_binary<float>(BinaryOp::kMaximum, 1.0f, NAN, 1.0f)));
  EXPECT_TRUE(std::isnan(apply_binary<float>(BinaryOp::kMinimum, 1.0f, NAN, 1.0f)));
  EXPECT_EQ(apply_binary<float>(BinaryOp::kAdd, 1.0f, 2.0f, 3.0f), 7.0f);  // a + alpha * b
  EXPECT_EQ(apply_binary<float>(BinaryOp::kSub, 1.0f, 2.0f, 3.0f), -5.0f);
  EXPECT_EQ(apply_binary<int64_t>(BinaryOp::kPow, 3, 4, 1), 81);
  EXPECT_EQ(apply_binary<int64_t>(BinaryOp::kPow, 0, 0, 1), 1);
  EXPECT_EQ(apply_binary<int64_t>(BinaryOp::kBitwiseAnd, 6, 3, 1), 2);
  EXPECT_EQ(apply_binary<float>(BinaryOp::kLogicalOr, 0.0f, -0.0f, 1.0f), 0.0f);
  EXPECT_TRUE(gives_bool(BinaryOp::kGe));
  EXPECT_FALSE(gives_bool(BinaryOp::kMul));
  EXPECT_FALSE(integer_unary(UnaryOp::kExp));
}

TEST(CudaMath, StridedOffsetsWalkAsTheCpuCopies) {
  // A [3, 4, 5] output, a transposed input, and one broadcast along dim 1.
  StridedIndexer ix;
  ix.dims = 3;
  const int64_t sizes[3] = {3, 4, 5};
  const int64_t strides[3][3] = {{20, 5, 1}, {1, 3, 12}, {5, 0, 1}};
  for (int d = 0; d < 3; ++d) {
    ix.sizes[d] = sizes[d];
    for (int k = 0; k < 3; ++k) ix.strides[k][d] = strides[k][d];
  }
  int64_t linear = 0;
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t l = 0; l < 5; ++l, ++linear) {
        int64_t off[3];
        strided_offsets<3>(ix, linear, off);
        EXPECT_EQ(off[0], i * 20 + j * 5 + l);
        EXPECT_EQ(off[1], i * 1 + j * 3 + l * 12);
        EXPECT_EQ(off[2], i * 5 + l);
      }
    }
  }
}

}  // namespace
}  // namespace nrt::exec::cuda
