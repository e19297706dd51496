// Every CUDA kernel against the CPU kernel of the same target on the same inputs: broadcast,
// non-contiguous, empty, NaN, 16-bit floats, masks. Needs a CUDA device: without one each test
// reports itself skipped (gpu_check.sh runs it on the lent GPU; CI builds it and leaves it out).
#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "executor/cuda/cuda_context.h"
#include "executor/kernels/cpu/element_conversion.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/runtime/allocator.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/tensor_copy.h"

namespace nrt::exec {
namespace {

using Args = std::vector<std::pair<std::string, RuntimeValue>>;
const Device kCuda{DeviceKind::kCuda, 0};

// Runs `target` on `device` with `args` (tensors already there); the outputs, on the host.
Result<std::vector<Tensor>> run_on(const std::string& target, Device device, const Args& args, size_t outputs) {
  const KernelInfo* info = KernelRegistry::global().find(target, device.kind);
  if (info == nullptr) return make_error(ErrorCode::MissingKernel, "no " + device.to_string() + " kernel " + target);
  std::vector<NamedValue> inputs;
  for (const auto& [name, value] : args) inputs.push_back({name, &value});
  std::vector<RuntimeValue> results(outputs);
  KernelContext ctx(target, inputs, results, device);
  if (device.kind == DeviceKind::kCuda) {
    auto context = cuda::cuda_context(device.index);
    if (!context) return context.error();
    ctx.set_device_context(*context);
  }
  NRT_RETURN_IF_ERROR(info->fn(ctx));
  std::vector<Tensor> host;
  for (auto& r : results) {
    const Tensor& t = std::get<Tensor>(r);
    NRT_TRY(back, copy_to_device(t, Device{}));
    host.push_back(std::move(*back));
  }
  return host;
}

// The same arguments with every tensor copied to the device (keeping its strides: a strided
// host view becomes a strided device view of a copy of its whole storage).
Args on_device(const Args& args) {
  auto moved_tensor = [](const Tensor& t) {
    auto storage = Storage::allocate(t.storage()->bytes(), kCuda);
    EXPECT_TRUE(copy_storage_bytes(*storage, 0, *t.storage(), 0, t.storage()->bytes()).ok());
    return Tensor(storage, t.dtype(), t.sizes(), t.strides(), t.storage_offset());
  };
  Args moved;
  for (const auto& [name, value] : args) {
    if (const auto* t = std::get_if<Tensor>(&value)) {
      moved.push_back({name, moved_tensor(*t)});
    } else if (const auto* list = std::get_if<std::vector<Tensor>>(&value)) {
      std::vector<Tensor> tensors;
      for (const Tensor& each : *list) tensors.push_back(moved_tensor(each));
      moved.push_back({name, tensors});
    } else if (const auto* optional = std::get_if<std::vector<std::optional<Tensor>>>(&value)) {
      std::vector<std::optional<Tensor>> tensors;
      for (const auto& each : *optional) tensors.push_back(each ? std::optional<Tensor>(moved_tensor(*each)) : std::nullopt);
      moved.push_back({name, tensors});
    } else {
      moved.push_back({name, value});
    }
  }
  return moved;
}

double value_at(const Tensor& t, int64_t i) {
  Tensor f = cpu::converted_copy(t, ScalarType::FLOAT64);
  return f.data<double>()[i];
}

// Tolerance per dtype: float32 1e-5 relative (cuBLASLt and the GPU's libm differ from the CPU's
// in the last bits), 16-bit floats a few units of their last place.
double tolerance(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::FLOAT16: return 2e-3;
    case ScalarType::BFLOAT16: return 1.6e-2;
    case ScalarType::FLOAT32: return 2e-5;
    default: return 1e-12;
  }
}

void expect_same(const std::string& target, const Args& args, size_t outputs = 1) {
  SCOPED_TRACE(target);
  auto expected = run_on(target, Device{}, args, outputs);
  ASSERT_TRUE(expected.ok()) << expected.error().to_string();
  auto actual = run_on(target, kCuda, on_device(args), outputs);
  ASSERT_TRUE(actual.ok()) << actual.error().to_string();
  for (size_t o = 0; o < outputs; ++o) {
    const Tensor& e = (*expected)[o];
    const Tensor& a = (*actual)[o];
    ASSERT_EQ(e.dtype(), a.dtype()) << "output " << o;
    ASSERT_EQ(e.sizes(), a.sizes()) << "output " << o;
    const double tol = tolerance(e.dtype());
    for (int64_t i = 0; i < e.numel(); ++i) {
      const double x = value_at(e, i), y = value_at(a, i);
      if (std::isinf(x) || std::isinf(y)) {
        EXPECT_EQ(x, y) << "output " << o << " element " << i;
        continue;
      }
      if (std::isnan(x) || std::isnan(y)) {
        EXPECT_EQ(std::isnan(x), std::isnan(y)) << "output " << o << " element " << i;
        continue;
      }
      EXPECT_LE(std::fabs(x - y), tol * (1 + std::fabs(x))) << "output " << o << " element " << i << ": cpu " << x
                                                               << ", cuda " << y;
    }
  }
}

// A host tensor of `dtype` with deterministic values in [-2, 2) (a few exact zeros and ties).
Tensor pattern(ScalarType dtype, std::vector<int64_t> sizes, uint32_t seed = 1) {
  Tensor f = Tensor::empty(ScalarType::FLOAT64, sizes);
  uint32_t state = seed * 2654435761u + 12345u;
  for (int64_t i = 0; i < f.numel(); ++i) {
    state = state * 1664525u + 1013904223u;
    f.data<double>()[i] = static_cast<double>((state >> 8) % 4096) / 1024.0 - 2.0;
  }
  return cpu::converted_copy(f, dtype);
}

Tensor transposed(const Tensor& t) { return t.as_strided({t.sizes()[1], t.sizes()[0]}, {t.strides()[1], t.strides()[0]}, 0); }

class CudaKernels : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto context = cuda::cuda_context(0); !context) GTEST_SKIP() << context.error().to_string();
  }
};

TEST_F(CudaKernels, ElementwiseBroadcastStridedAndPromoted) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT16, ScalarType::BFLOAT16, ScalarType::FLOAT64,
                           ScalarType::INT64, ScalarType::INT32}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor a = pattern(dtype, {3, 1, 5}, 1), b = pattern(dtype, {4, 5}, 2);
    expect_same("aten::add.Tensor", {{"self", a}, {"other", b}, {"alpha", int64_t{2}}});
    expect_same("aten::sub.Tensor", {{"self", a}, {"other", b}});
    expect_same("aten::mul.Tensor", {{"self", transposed(pattern(dtype, {5, 4}))}, {"other", b}});
    expect_same("aten::maximum.default", {{"self", a}, {"other", b}});
    expect_same("aten::gt.Tensor", {{"self", a}, {"other", b}});
    expect_same("aten::eq.Scalar", {{"self", a}, {"other", int64_t{0}}});
  }
  // int + float32 promotes; integer true division gives float32; a Python float keeps float16.
  expect_same("aten::add.Tensor", {{"self", pattern(ScalarType::INT64, {6})}, {"other", pattern(ScalarType::FLOAT32, {6})}});
  expect_same("aten::div.Tensor", {{"self", pattern(ScalarType::INT64, {6})}, {"other", pattern(ScalarType::INT32, {6}, 3)}});
  expect_same("aten::mul.Scalar", {{"self", pattern(ScalarType::FLOAT16, {7})}, {"other", 0.5}});
  expect_same("aten::pow.Tensor_Scalar", {{"self", pattern(ScalarType::FLOAT32, {9})}, {"exponent", int64_t{2}}});
  // Large and dense: the packed path, with an odd tail.
  expect_same("aten::add.Tensor", {{"self", pattern(ScalarType::FLOAT32, {1031})}, {"other", pattern(ScalarType::FLOAT32, {1031}, 5)}});
  // Empty and 0-d.
  expect_same("aten::mul.Tensor", {{"self", pattern(ScalarType::FLOAT32, {0, 3})}, {"other", pattern(ScalarType::FLOAT32, {3})}});
  expect_same("aten::mul.Tensor", {{"self", pattern(ScalarType::FLOAT32, {})}, {"other", pattern(ScalarType::FLOAT32, {2})}});
}

TEST_F(CudaKernels, NaNPropagatesAsOnTheCpu) {
  Tensor x = pattern(ScalarType::FLOAT32, {4});
  x.data<float>()[1] = NAN;
  const Tensor y = pattern(ScalarType::FLOAT32, {4}, 2);
  expect_same("aten::maximum.default", {{"self", x}, {"other", y}});
  expect_same("aten::minimum.default", {{"self", y}, {"other", x}});
  expect_same("aten::relu.default", {{"self", x}});
  expect_same("aten::clamp.default", {{"self", x}, {"min", -0.5}, {"max", 0.5}});
}

TEST_F(CudaKernels, UnaryAndActivations) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT16, ScalarType::BFLOAT16}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor x = pattern(dtype, {2, 33});
    for (const char* target : {"aten::relu.default", "aten::tanh.default", "aten::sigmoid.default", "aten::silu.default",
                               "aten::neg.default", "aten::exp.default", "aten::sin.default", "aten::cos.default"}) {
      expect_same(target, {{"self", x}});
    }
    expect_same("aten::gelu.default", {{"self", x}});
    expect_same("aten::gelu.default", {{"self", x}, {"approximate", std::string("tanh")}});
    expect_same("aten::rsqrt.default", {{"self", transposed(pattern(dtype, {33, 2}))}});
  }
  expect_same("aten::logical_not.default", {{"self", pattern(ScalarType::INT64, {5})}});
}

TEST_F(CudaKernels, CopiesWhereAndConversions) {
  const Tensor x = pattern(ScalarType::FLOAT32, {3, 4});
  expect_same("aten::_to_copy.default", {{"self", x}, {"dtype", ScalarType::BFLOAT16}});
  expect_same("aten::_to_copy.default", {{"self", pattern(ScalarType::FLOAT64, {5})}, {"dtype", ScalarType::INT64}});
  expect_same("aten::clone.default", {{"self", transposed(x)}});
  Tensor cond = cpu::converted_copy(pattern(ScalarType::FLOAT32, {3, 1}, 7), ScalarType::BOOL);
  expect_same("aten::where.self", {{"condition", cond}, {"self", x}, {"other", pattern(ScalarType::FLOAT32, {4}, 9)}});
}

TEST_F(CudaKernels, MatrixProductsThroughCublasLt) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT16, ScalarType::BFLOAT16, ScalarType::FLOAT64}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor a = pattern(dtype, {5, 7}), b = pattern(dtype, {7, 3}, 2);
    expect_same("aten::mm.default", {{"self", a}, {"mat2", b}});
    expect_same("aten::mm.default", {{"self", transposed(pattern(dtype, {7, 5}))}, {"mat2", transposed(pattern(dtype, {3, 7}))}});
    expect_same("aten::addmm.default", {{"self", pattern(dtype, {3}, 4)}, {"mat1", a}, {"mat2", b}, {"beta", 0.5}, {"alpha", 2.0}});
    expect_same("aten::linear.default", {{"input", pattern(dtype, {2, 4, 7})}, {"weight", pattern(dtype, {6, 7}, 3)},
                                         {"bias", pattern(dtype, {6}, 4)}});
    expect_same("aten::linear.default", {{"input", pattern(dtype, {7})}, {"weight", pattern(dtype, {6, 7}, 3)}});
    expect_same("aten::bmm.default", {{"self", pattern(dtype, {3, 4, 5})}, {"mat2", pattern(dtype, {3, 5, 2}, 6)}});
    expect_same("aten::matmul.default", {{"self", pattern(dtype, {2, 1, 4, 5})}, {"other", pattern(dtype, {3, 5, 2}, 6)}});
    expect_same("aten::matmul.default", {{"self", pattern(dtype, {5})}, {"other", pattern(dtype, {2, 5, 3}, 6)}});
  }
  // Empty contraction: zeros (and the bias).
  expect_same("aten::addmm.default", {{"self", pattern(ScalarType::FLOAT32, {3})}, {"mat1", pattern(ScalarType::FLOAT32, {2, 0})},
                                      {"mat2", pattern(ScalarType::FLOAT32, {0, 3})}});
}

TEST_F(CudaKernels, RowsNormalizationAndReductions) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT16, ScalarType::BFLOAT16}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor x = pattern(dtype, {3, 4, 37});
    expect_same("aten::softmax.int", {{"self", x}, {"dim", int64_t{-1}}});
    expect_same("aten::softmax.int", {{"self", x}, {"dim", int64_t{1}}});
    expect_same("aten::_log_softmax.default", {{"self", x}, {"dim", int64_t{0}}, {"half_to_float", false}});
    expect_same("aten::layer_norm.default", {{"input", x}, {"normalized_shape", std::vector<int64_t>{37}},
                                             {"weight", pattern(dtype, {37}, 2)}, {"bias", pattern(dtype, {37}, 3)}});
    expect_same("aten::rms_norm.default", {{"input", x}, {"normalized_shape", std::vector<int64_t>{4, 37}},
                                           {"weight", pattern(dtype, {4, 37}, 2)}, {"eps", 1e-6}});
    expect_same("aten::mean.dim", {{"self", x}, {"dim", std::vector<int64_t>{0, 2}}, {"keepdim", true}});
    expect_same("aten::sum.dim_IntList", {{"self", x}, {"dim", std::vector<int64_t>{1}}});
  }
  const Tensor x = pattern(ScalarType::FLOAT32, {6, 10});
  expect_same("aten::native_layer_norm.default",
              {{"input", x}, {"normalized_shape", std::vector<int64_t>{10}}, {"weight", RuntimeValue{}}, {"bias", RuntimeValue{}}, {"eps", 1e-5}},
              3);
  expect_same("aten::sum.default", {{"self", x}});
}

TEST_F(CudaKernels, EmbeddingAndAttention) {
  Tensor index = Tensor::empty(ScalarType::INT64, {2, 3});
  for (int64_t i = 0; i < 6; ++i) index.data<int64_t>()[i] = (i * 5) % 9;
  expect_same("aten::embedding.default", {{"weight", pattern(ScalarType::FLOAT32, {9, 4})}, {"indices", index}});
  index.data<int64_t>()[4] = 9;  // outside the table: an error on both devices
  auto refused = run_on("aten::embedding.default", kCuda,
                        on_device({{"weight", pattern(ScalarType::FLOAT32, {9, 4})}, {"indices", index}}), 1);
  EXPECT_FALSE(refused.ok());

  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT16, ScalarType::BFLOAT16}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor q = pattern(dtype, {2, 3, 5, 8}), k = pattern(dtype, {2, 3, 6, 8}, 2), v = pattern(dtype, {2, 3, 6, 4}, 3);
    expect_same("aten::scaled_dot_product_attention.default", {{"query", q}, {"key", k}, {"value", v}});
    const Tensor kq = pattern(dtype, {2, 3, 5, 8}, 2), vq = pattern(dtype, {2, 3, 5, 4}, 3);
    expect_same("aten::scaled_dot_product_attention.default",
                {{"query", q}, {"key", kq}, {"value", vq}, {"attn_mask", RuntimeValue{}}, {"dropout_p", 0.0}, {"is_causal", true}});
    Tensor mask = cpu::converted_copy(pattern(ScalarType::FLOAT32, {5, 6}, 11), ScalarType::BOOL);
    for (int64_t i = 0; i < 5; ++i) mask.data<bool>()[i * 6] = true;  // no row fully masked
    expect_same("aten::scaled_dot_product_attention.default", {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", mask}});
    expect_same("aten::scaled_dot_product_attention.default",
                {{"query", q}, {"key", k}, {"value", v}, {"attn_mask", pattern(dtype, {1, 3, 5, 6}, 4)}});
  }
}

TEST_F(CudaKernels, ArgReductionsFollowTorchsTiesAndNaN) {
  Tensor x = pattern(ScalarType::FLOAT32, {4, 9});
  x.data<float>()[3] = 5.0f;
  x.data<float>()[7] = 5.0f;  // a tie: the first index wins
  x.data<float>()[12] = NAN;
  x.data<float>()[15] = NAN;  // two NaNs: the first wins, for max and min alike
  for (const char* target : {"aten::argmax.default", "aten::argmin.default"}) {
    expect_same(target, {{"self", x}, {"dim", int64_t{1}}});
    expect_same(target, {{"self", x}, {"dim", int64_t{0}}, {"keepdim", true}});
    expect_same(target, {{"self", x}});
  }
  expect_same("aten::max.dim", {{"self", x}, {"dim", int64_t{1}}}, 2);
  expect_same("aten::min.dim", {{"self", x}, {"dim", int64_t{0}}, {"keepdim", true}}, 2);
  expect_same("aten::amax.default", {{"self", x}, {"dim", std::vector<int64_t>{0}}});
  for (ScalarType dtype : {ScalarType::BOOL, ScalarType::INT64, ScalarType::BFLOAT16}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor y = pattern(dtype, {3, 7}, 5);
    expect_same("aten::argmax.default", {{"self", y}, {"dim", int64_t{-1}}});
    expect_same("aten::any.dim", {{"self", y}, {"dim", int64_t{1}}});
  }
  expect_same("aten::all.default", {{"self", x}});
}

TEST_F(CudaKernels, IndexingGatherAndSelect) {
  const Tensor x = pattern(ScalarType::FLOAT32, {5, 6, 7});
  Tensor i = Tensor::empty(ScalarType::INT64, {2, 3});
  for (int64_t k = 0; k < 6; ++k) i.data<int64_t>()[k] = (k * 4) % 5 - 2;  // negatives wrap
  Tensor j = Tensor::empty(ScalarType::INT64, {3});
  for (int64_t k = 0; k < 3; ++k) j.data<int64_t>()[k] = 5 - 2 * k;
  using Indices = std::vector<std::optional<Tensor>>;
  expect_same("aten::index.Tensor", {{"self", x}, {"indices", Indices{i}}});
  expect_same("aten::index.Tensor", {{"self", x}, {"indices", Indices{std::nullopt, std::nullopt, j}}});
  expect_same("aten::index.Tensor", {{"self", x}, {"indices", Indices{i, std::nullopt, j}}});  // not adjacent: front
  expect_same("aten::index.Tensor", {{"self", x}, {"indices", Indices{std::nullopt, j, j}}});
  Tensor g = Tensor::empty(ScalarType::INT64, {5, 2, 7});
  for (int64_t k = 0; k < g.numel(); ++k) g.data<int64_t>()[k] = (k * 7) % 6;
  expect_same("aten::gather.default", {{"self", x}, {"dim", int64_t{1}}, {"index", g}});
  expect_same("aten::index_select.default", {{"self", x}, {"dim", int64_t{2}}, {"index", j}});
  Tensor outside = Tensor::empty(ScalarType::INT64, {1});
  outside.data<int64_t>()[0] = 6;
  auto refused = run_on("aten::index_select.default", kCuda,
                        on_device({{"self", x}, {"dim", int64_t{0}}, {"index", outside}}), 1);
  EXPECT_FALSE(refused.ok());
}

TEST_F(CudaKernels, CreationAndConversionsShareTheHostKernels) {
  expect_same("aten::arange.start_step", {{"start", int64_t{2}}, {"end", int64_t{20}}, {"step", int64_t{3}}});
  expect_same("aten::full.default", {{"size", std::vector<int64_t>{3, 4}}, {"fill_value", 1.5}});
  expect_same("aten::zeros_like.default", {{"self", pattern(ScalarType::BFLOAT16, {2, 5})}});
  expect_same("aten::new_ones.default", {{"self", pattern(ScalarType::FLOAT16, {2})}, {"size", std::vector<int64_t>{3, 2}}});
  expect_same("aten::scalar_tensor.default", {{"s", -2.25}});
  expect_same("aten::to.dtype", {{"self", transposed(pattern(ScalarType::FLOAT32, {3, 4}))}, {"dtype", ScalarType::INT32}});
  expect_same("aten::copy.default", {{"self", pattern(ScalarType::FLOAT16, {3, 4})}, {"src", pattern(ScalarType::FLOAT32, {4}, 2)}});
}

TEST_F(CudaKernels, ConvolutionPoolingAndBatchNorm) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT16}) {
    SCOPED_TRACE(std::string(short_name(dtype)));
    const Tensor x = pattern(dtype, {2, 4, 9, 8});
    expect_same("aten::conv2d.default", {{"input", x}, {"weight", pattern(dtype, {6, 4, 3, 3}, 2)}, {"bias", pattern(dtype, {6}, 3)},
                                         {"stride", std::vector<int64_t>{2, 1}}, {"padding", std::vector<int64_t>{1, 0}}});
    expect_same("aten::conv2d.default", {{"input", x}, {"weight", pattern(dtype, {4, 2, 3, 1}, 2)}, {"bias", RuntimeValue{}},
                                         {"stride", std::vector<int64_t>{1}}, {"padding", std::vector<int64_t>{1}},
                                         {"dilation", std::vector<int64_t>{2}}, {"groups", int64_t{2}}});
    expect_same("aten::conv1d.default", {{"input", pattern(dtype, {2, 3, 11})}, {"weight", pattern(dtype, {5, 3, 3}, 4)},
                                         {"bias", pattern(dtype, {5}, 5)}, {"stride", std::vector<int64_t>{2}}});
    expect_same("aten::max_pool2d.default", {{"self", x}, {"kernel_size", std::vector<int64_t>{3, 3}},
                                             {"stride", std::vector<int64_t>{2, 2}}, {"padding", std::vector<int64_t>{1, 1}},
                                             {"dilation", std::vector<int64_t>{1, 1}}, {"ceil_mode", true}});
    expect_same("aten::max_pool2d_with_indices.default", {{"self", x}, {"kernel_size", std::vector<int64_t>{2, 2}}}, 2);
    expect_same("aten::adaptive_avg_pool2d.default", {{"self", x}, {"output_size", std::vector<int64_t>{4, 3}}});
    expect_same("aten::_native_batch_norm_legit_no_training.default",
                {{"input", x}, {"weight", pattern(dtype, {4}, 6)}, {"bias", pattern(dtype, {4}, 7)},
                 {"running_mean", pattern(dtype, {4}, 8)}, {"running_var", cpu::converted_copy(pattern(ScalarType::FLOAT64, {4}, 9), dtype)},
                 {"momentum", 0.1}, {"eps", 4.0}},
                3);
  }
}

TEST_F(CudaKernels, ScansDiffsAndMasks) {
  expect_same("aten::cumsum.default", {{"self", pattern(ScalarType::INT64, {3, 5})}, {"dim", int64_t{1}}});
  expect_same("aten::cumsum.default", {{"self", pattern(ScalarType::FLOAT32, {3, 5})}, {"dim", int64_t{0}}});
  expect_same("aten::diff.default", {{"self", pattern(ScalarType::INT64, {3, 6})}, {"n", int64_t{2}}, {"dim", int64_t{-1}},
                                     {"prepend", pattern(ScalarType::INT64, {3, 1}, 4)}});
  Tensor mask = cpu::converted_copy(pattern(ScalarType::FLOAT32, {1, 5}, 2), ScalarType::BOOL);
  expect_same("aten::masked_fill.Scalar", {{"self", pattern(ScalarType::FLOAT16, {3, 5})}, {"mask", mask}, {"value", -65504.0}});
  expect_same("aten::hardswish.default", {{"self", pattern(ScalarType::FLOAT32, {40})}});
  expect_same("aten::where.ScalarOther", {{"condition", mask}, {"self", pattern(ScalarType::FLOAT32, {3, 5})}, {"other", -1.5}});
  expect_same("aten::fmod.Scalar", {{"self", pattern(ScalarType::FLOAT32, {20})}, {"other", 0.75}});
  Tensor divisor = pattern(ScalarType::INT64, {20}, 3);
  for (int64_t i = 0; i < 20; ++i) divisor.data<int64_t>()[i] += divisor.data<int64_t>()[i] == 0 ? -3 : 0;
  expect_same("aten::remainder.Tensor", {{"self", pattern(ScalarType::INT64, {20})}, {"other", divisor}});
  divisor.data<int64_t>()[7] = 0;  // refused on both devices
  EXPECT_FALSE(run_on("aten::remainder.Tensor", kCuda,
                      on_device({{"self", pattern(ScalarType::INT64, {20})}, {"other", divisor}}), 1)
                   .ok());
  expect_same("aten::remainder.Scalar", {{"self", pattern(ScalarType::FLOAT32, {20})}, {"other", -0.75}});
}

TEST_F(CudaKernels, PadRollFlipRepeatAndScatter) {
  const Tensor x = pattern(ScalarType::FLOAT32, {2, 3, 5});
  expect_same("aten::constant_pad_nd.default", {{"self", x}, {"pad", std::vector<int64_t>{1, -2, 2, 0}}, {"value", 0.5}});
  expect_same("aten::pad.default", {{"self", x}, {"pad", std::vector<int64_t>{2, 1}}, {"mode", std::string("reflect")}});
  expect_same("aten::roll.default", {{"self", x}, {"shifts", std::vector<int64_t>{2, -1}}, {"dims", std::vector<int64_t>{2, 0}}});
  expect_same("aten::flip.default", {{"self", x}, {"dims", std::vector<int64_t>{0, 2}}});
  expect_same("aten::repeat.default", {{"self", x}, {"repeats", std::vector<int64_t>{2, 1, 1, 3}}});
  expect_same("aten::slice_scatter.default", {{"self", x}, {"src", pattern(ScalarType::FLOAT32, {2, 3, 2}, 4)}, {"dim", int64_t{2}},
                                              {"start", int64_t{1}}, {"end", int64_t{5}}, {"step", int64_t{2}}});
}

// A recurrent layer's arguments: `layers` x `directions` sets of (w_ih, w_hh[, b_ih, b_hh]).
std::vector<std::pair<std::string, RuntimeValue>> rnn_args(const Tensor& input, std::vector<Tensor> hx, int64_t gates,
                                                           int64_t in, int64_t hidden, int64_t layers, bool bidirectional,
                                                           bool batch_first, bool biases) {
  std::vector<Tensor> params;
  const int64_t directions = bidirectional ? 2 : 1;
  uint32_t seed = 20;
  for (int64_t l = 0; l < layers; ++l) {
    for (int64_t d = 0; d < directions; ++d) {
      params.push_back(pattern(ScalarType::FLOAT32, {gates * hidden, l == 0 ? in : directions * hidden}, seed++));
      params.push_back(pattern(ScalarType::FLOAT32, {gates * hidden, hidden}, seed++));
      if (biases) {
        params.push_back(pattern(ScalarType::FLOAT32, {gates * hidden}, seed++));
        params.push_back(pattern(ScalarType::FLOAT32, {gates * hidden}, seed++));
      }
    }
  }
  std::vector<std::pair<std::string, RuntimeValue>> args{{"input", input}};
  if (hx.size() == 1) {
    args.push_back({"hx", hx[0]});
  } else {
    args.push_back({"hx", hx});
  }
  args.push_back({"params", params});
  args.push_back({"has_biases", biases});
  args.push_back({"num_layers", layers});
  args.push_back({"dropout", 0.0});
  args.push_back({"train", false});
  args.push_back({"bidirectional", bidirectional});
  args.push_back({"batch_first", batch_first});
  return args;
}

TEST_F(CudaKernels, RecurrentLayersMatchTheHost) {
  const int64_t T = 5, B = 3, in = 4, H = 6;
  auto state = [&](int64_t layers_directions, uint32_t seed) { return pattern(ScalarType::FLOAT32, {layers_directions, B, H}, seed); };
  const Tensor x = pattern(ScalarType::FLOAT32, {T, B, in}, 1);
  expect_same("aten::lstm.input", rnn_args(x, {state(4, 2), state(4, 3)}, 4, in, H, 2, true, false, true), 3);
  expect_same("aten::gru.input", rnn_args(pattern(ScalarType::FLOAT32, {B, T, in}, 4), {state(1, 5)}, 3, in, H, 1, false, true, true), 2);
  expect_same("aten::rnn_relu.input", rnn_args(x, {state(2, 6)}, 1, in, H, 1, true, false, false), 2);
  expect_same("aten::rnn_tanh.input",
              rnn_args(pattern(ScalarType::FLOAT32, {T, in}, 7), {pattern(ScalarType::FLOAT32, {2, H}, 8)}, 1, in, H, 2, false, false, true), 2);
}

TEST_F(CudaKernels, ViewsServeTheDeviceAndCopyWhenTheyMust) {
  const Tensor x = pattern(ScalarType::FLOAT32, {4, 6});
  expect_same("aten::reshape.default", {{"self", transposed(x)}, {"shape", std::vector<int64_t>{24}}});
  expect_same("aten::permute.default", {{"self", pattern(ScalarType::FLOAT32, {2, 3, 4})}, {"dims", std::vector<int64_t>{2, 0, 1}}});
  expect_same("aten::contiguous.default", {{"self", transposed(x)}});
  expect_same("aten::cat.default", {{"tensors", std::vector<Tensor>{x, transposed(pattern(ScalarType::FLOAT32, {2, 4}))}},
                                    {"dim", int64_t{1}}});
}

}  // namespace
}  // namespace nrt::exec
