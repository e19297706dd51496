// Kernel properties the NumPy goldens do not show: views share storage (and are registered as
// views), errors are values naming the target, preallocated outputs of the wrong shape are
// replaced, secondary outputs may be absent, every dtype an op allows is accepted, the 16-bit
// float conversions round correctly, torch's promotion table, and BLAS products of sizes and
// layouts beyond the goldens' small ones.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "executor/runtime/convolution_epilogue.h"
#include "executor/runtime/intra_op_threads.h"
#include "executor/runtime/kernel.h"
#include "executor/kernels/cpu/channels_last_max_pool.h"
#include "executor/kernels/cpu/dtype_dispatch.h"
#include "executor/kernels/cpu/element_conversion.h"
#include "executor/kernels/cpu/float_activation_loops.h"
#include "executor/kernels/cpu/gemm.h"
#include "executor/kernels/cpu/kept_by_storage.h"
#include "executor/kernels/cpu/layer_norm_float_rows.h"
#include "executor/kernels/cpu/onednn_kept_weights.h"
#include "executor/kernels/cpu/tensor_copy.h"
#include "executor/kernels/cpu/type_promotion.h"
#include "core/scalar_type.h"

namespace nrt::exec::cpu {
namespace {

// One kernel call with named arguments.
struct Call {
  std::string target;
  std::vector<std::pair<std::string, RuntimeValue>> args;
  std::vector<RuntimeValue> outputs;

  Status run(size_t num_outputs = 1) {
    const KernelInfo* info = KernelRegistry::global().find(target, DeviceKind::kCpu);
    if (info == nullptr) return make_error(ErrorCode::InvalidArgument, "no kernel " + target);
    std::vector<NamedValue> inputs;
    for (const auto& [name, value] : args) inputs.push_back({name, &value});
    outputs.resize(std::max(outputs.size(), num_outputs));
    KernelContext ctx(target, inputs, std::span<RuntimeValue>(outputs.data(), num_outputs), Device{});
    return info->fn(ctx);
  }
  const Tensor& out(size_t i = 0) const { return std::get<Tensor>(outputs[i]); }
};

const ScalarType kAllTypes[] = {ScalarType::FLOAT32, ScalarType::FLOAT64, ScalarType::FLOAT16, ScalarType::BFLOAT16,
                                ScalarType::INT8,    ScalarType::INT16,   ScalarType::INT32,   ScalarType::INT64,
                                ScalarType::UINT8,   ScalarType::BOOL};

// A contiguous tensor of `dtype` holding `values` (converted as the kernels convert).
Tensor make(ScalarType dtype, std::vector<int64_t> sizes, const std::vector<double>& values) {
  Tensor t = Tensor::empty(dtype, std::move(sizes));
  for (size_t i = 0; i < values.size(); ++i) {
    uint8_t* p = t.raw_data() + i * t.element_size();
    switch (dtype) {
      case ScalarType::FLOAT32: *reinterpret_cast<float*>(p) = convert<float>(values[i]); break;
      case ScalarType::FLOAT64: *reinterpret_cast<double*>(p) = values[i]; break;
      case ScalarType::FLOAT16: *reinterpret_cast<Half*>(p) = convert<Half>(values[i]); break;
      case ScalarType::BFLOAT16: *reinterpret_cast<BFloat16*>(p) = convert<BFloat16>(values[i]); break;
      case ScalarType::INT8: *reinterpret_cast<int8_t*>(p) = convert<int8_t>(values[i]); break;
      case ScalarType::INT16: *reinterpret_cast<int16_t*>(p) = convert<int16_t>(values[i]); break;
      case ScalarType::INT32: *reinterpret_cast<int32_t*>(p) = convert<int32_t>(values[i]); break;
      case ScalarType::INT64: *reinterpret_cast<int64_t*>(p) = convert<int64_t>(values[i]); break;
      case ScalarType::UINT8: *reinterpret_cast<uint8_t*>(p) = convert<uint8_t>(values[i]); break;
      case ScalarType::BOOL: *reinterpret_cast<bool*>(p) = values[i] != 0; break;
      default: break;
    }
  }
  return t;
}

// Element i of a tensor in row-major order (any strides), as a double.
double at(const Tensor& t, int64_t i) {
  int64_t offset = 0;
  for (size_t d = t.sizes().size(); d-- > 0;) {
    offset += (i % t.sizes()[d]) * t.strides()[d];
    i /= t.sizes()[d];
  }
  const uint8_t* p = t.raw_data() + offset * static_cast<int64_t>(t.element_size());
  switch (t.dtype()) {
    case ScalarType::FLOAT32: return *reinterpret_cast<const float*>(p);
    case ScalarType::FLOAT64: return *reinterpret_cast<const double*>(p);
    case ScalarType::FLOAT16: return to_float(*reinterpret_cast<const Half*>(p));
    case ScalarType::BFLOAT16: return to_float(*reinterpret_cast<const BFloat16*>(p));
    case ScalarType::INT8: return *reinterpret_cast<const int8_t*>(p);
    case ScalarType::INT16: return *reinterpret_cast<const int16_t*>(p);
    case ScalarType::INT32: return *reinterpret_cast<const int32_t*>(p);
    case ScalarType::INT64: return static_cast<double>(*reinterpret_cast<const int64_t*>(p));
    case ScalarType::UINT8: return *reinterpret_cast<const uint8_t*>(p);
    case ScalarType::BOOL: return *reinterpret_cast<const bool*>(p) ? 1.0 : 0.0;
    default: return std::nan("");
  }
}

std::vector<double> values_of(const Tensor& t) {
  std::vector<double> v;
  for (int64_t i = 0; i < t.numel(); ++i) v.push_back(at(t, i));
  return v;
}

Tensor iota(ScalarType dtype, std::vector<int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[static_cast<size_t>(i)] = static_cast<double>(i);
  return make(dtype, std::move(sizes), v);
}

// --- Views -------------------------------------------------------------------------------------

struct ViewCase {
  std::string target;
  std::vector<std::pair<std::string, RuntimeValue>> extra;
  std::vector<double> expected;  // row-major values of the view of iota([2, 3, 4])
  std::vector<int64_t> sizes;
};

TEST(Views, ShareStorageWithTheirInput) {
  const Tensor x = iota(ScalarType::FLOAT32, {2, 3, 4});
  const std::vector<ViewCase> cases = {
      {"aten::view.default", {{"size", std::vector<int64_t>{6, 4}}}, {}, {6, 4}},
      {"aten::reshape.default", {{"shape", std::vector<int64_t>{-1}}}, {}, {24}},
      {"aten::_unsafe_view.default", {{"size", std::vector<int64_t>{2, 12}}}, {}, {2, 12}},
      {"aten::flatten.using_ints", {}, {}, {24}},
      {"aten::unflatten.int", {{"dim", int64_t{2}}, {"sizes", std::vector<int64_t>{2, 2}}}, {}, {2, 3, 2, 2}},
      {"aten::permute.default", {{"dims", std::vector<int64_t>{2, 0, 1}}}, {}, {4, 2, 3}},
      {"aten::transpose.int", {{"dim0", int64_t{0}}, {"dim1", int64_t{1}}}, {}, {3, 2, 4}},
      {"aten::expand.default", {{"size", std::vector<int64_t>{5, 2, 3, 4}}}, {}, {5, 2, 3, 4}},
      {"aten::unsqueeze.default", {{"dim", int64_t{1}}}, {}, {2, 1, 3, 4}},
      {"aten::slice.Tensor", {{"dim", int64_t{2}}, {"start", int64_t{1}}, {"step", int64_t{2}}}, {}, {2, 3, 2}},
      {"aten::select.int", {{"dim", int64_t{1}}, {"index", int64_t{2}}}, {8, 9, 10, 11, 20, 21, 22, 23}, {2, 4}},
      {"aten::narrow.default", {{"dim", int64_t{0}}, {"start", int64_t{1}}, {"length", int64_t{1}}}, {}, {1, 3, 4}},
      {"aten::alias.default", {}, {}, {2, 3, 4}},
      {"aten::detach.default", {}, {}, {2, 3, 4}},
      {"aten::contiguous.default", {}, {}, {2, 3, 4}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.target);
    const KernelInfo* info = KernelRegistry::global().find(c.target, DeviceKind::kCpu);
    ASSERT_NE(info, nullptr);
    EXPECT_TRUE(info->is_view);
    Call call{c.target, {{"self", x}}, {}};
    for (const auto& e : c.extra) call.args.push_back(e);
    ASSERT_TRUE(call.run().ok());
    const Tensor& out = call.out();
    EXPECT_EQ(out.storage(), x.storage());
    EXPECT_EQ(out.sizes(), c.sizes);
    if (!c.expected.empty()) {
      EXPECT_EQ(values_of(out), c.expected);
    }
  }
}

TEST(Views, AsStridedViewsTheStorageFromItsOffset) {
  const Tensor base = make(ScalarType::FLOAT32, {12}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  Call call{"aten::as_strided.default",
            {{"self", base}, {"size", std::vector<int64_t>{3, 4}}, {"stride", std::vector<int64_t>{2, 1}},
             {"storage_offset", int64_t{1}}},
            {}};
  ASSERT_TRUE(call.run().ok());
  const Tensor& view = call.out();
  EXPECT_EQ(view.storage(), base.storage());
  EXPECT_EQ(view.storage_offset(), 1);
  // Overlapping rows: element [r, c] is storage element 1 + 2r + c.
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 4; ++c) EXPECT_EQ(view.data<float>()[r * 2 + c], static_cast<float>(1 + 2 * r + c));
  }
  Call beyond{"aten::as_strided.default",
              {{"self", base}, {"size", std::vector<int64_t>{4, 4}}, {"stride", std::vector<int64_t>{4, 1}}},
              {}};
  const Status status = beyond.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.error().message.find("reaches element 15 of a storage of 12"), std::string::npos)
      << status.error().message;
}

// Both builds of the float activation loops agree with double-precision references within a
// few ulp (relative), over the whole float range, NaN and infinities included.
TEST(FloatActivations, BaselineAvx2AndAvx512MatchTheReferences) {
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.0137f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 1e-8f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    x.push_back(v);
  }
  auto gelu = [](double v) { return 0.5 * v * std::erfc(-v / std::sqrt(2.0)); };
  const std::vector<std::pair<FloatActivation, double (*)(double)>> ops = {
      {FloatActivation::kExp, [](double v) { return std::exp(v); }},
      {FloatActivation::kSigmoid, [](double v) { return 1.0 / (1.0 + std::exp(-v)); }},
      {FloatActivation::kTanh, [](double v) { return std::tanh(v); }},
      {FloatActivation::kGelu, +gelu},
  };
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  for (const auto& [op, reference] : ops) {
    for (auto* build : {&detail::float_activation_baseline, &detail::float_activation_avx2,
                        &detail::float_activation_avx512}) {
      if (build == &detail::float_activation_avx2 && !avx2) continue;      // this CPU cannot run it
      if (build == &detail::float_activation_avx512 && !avx512) continue;  // nor this
      std::vector<float> y(x.size());
      build(op, y.data(), x.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); ++i) {
        const double want = static_cast<float>(reference(static_cast<double>(x[i])));  // overflows as float does
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(y[i])) << static_cast<int>(op) << " at " << x[i];
          continue;
        }
        if (std::isinf(want)) {
          EXPECT_EQ(y[i], want) << static_cast<int>(op) << " at " << x[i];
          continue;
        }
        if (std::fabs(want) < 1e-37) {
          EXPECT_NEAR(y[i], want, 1e-37) << static_cast<int>(op) << " at " << x[i];
          continue;
        }
        // gelu's negative tail is exp(-x^2 / 2) times a ratio: the float rounding of x^2 / 2 alone
        // costs x^2 / 2 ulp of relative accuracy (its conditioning), which bounds it there.
        const double x2 = static_cast<double>(x[i]) * x[i];
        const double tolerance = op == FloatActivation::kGelu && x[i] < 0 ? 4e-7 * std::max(1.0, x2 / 2) : 4e-7;
        EXPECT_LE(std::fabs(y[i] - want) / std::fabs(want), tolerance) << static_cast<int>(op) << " at " << x[i];
      }
    }
  }
}

// Each build's vector lanes give the bits its scalar tail gives for the same input (the loops run
// the last n % lanes elements one at a time): the AVX-512 exp scales by 2^n with vscalefps where
// the tail builds 2^n in the exponent bits. Swept over exp's whole range, its denormal results
// and overflow included.
TEST(FloatActivations, VectorLanesGiveTheScalarTailsBits) {
  std::vector<float> x;
  for (float v = -110.0f; v <= 95.0f; v += 0.00731f) x.push_back(v);
  for (float v : {0.0f, -0.0f, 1e-30f, -1e-30f, 88.72f, 88.73f, -103.9f, -87.34f, std::numeric_limits<float>::infinity(),
                  -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()}) {
    x.push_back(v);
  }
  x.resize(x.size() / 16 * 16);  // every element in a vector for the first call
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  const bool avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq");
  for (FloatActivation op : {FloatActivation::kExp, FloatActivation::kSigmoid, FloatActivation::kSilu,
                             FloatActivation::kTanh, FloatActivation::kGelu, FloatActivation::kGeluTanh}) {
    for (auto* build : {&detail::float_activation_baseline, &detail::float_activation_avx2,
                        &detail::float_activation_avx512}) {
      if (build == &detail::float_activation_avx2 && !avx2) continue;      // this CPU cannot run it
      if (build == &detail::float_activation_avx512 && !avx512) continue;  // nor this
      std::vector<float> lanes(x.size()), tail(x.size());
      build(op, lanes.data(), x.data(), static_cast<int64_t>(x.size()));
      for (size_t i = 0; i < x.size(); i += 3) {  // 3 elements a call: all in the tail
        build(op, tail.data() + i, x.data() + i, static_cast<int64_t>(std::min<size_t>(3, x.size() - i)));
      }
      int differing = 0;
      for (size_t i = 0; i < x.size(); ++i) {
        if (std::memcmp(&lanes[i], &tail[i], sizeof(float)) != 0 && differing++ < 5) {
          ADD_FAILURE() << "op " << static_cast<int>(op) << " at " << x[i] << ": lanes " << lanes[i] << ", tail "
                        << tail[i];
        }
      }
      EXPECT_EQ(differing, 0) << "op " << static_cast<int>(op);
    }
  }
}

// The float32 layer norm rows give the same bits in the baseline and the AVX-512 build (neither
// contracts a multiply and an add), for row lengths around the eight double lanes and whisper's and
// BERT's, with and without weight and bias, and the same statistics.
TEST(LayerNormRows, BaselineAndAvx512BuildsGiveTheSameBits) {
  if (!(__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("avx512f"))) {
    GTEST_SKIP() << "this CPU lacks AVX-512 F";
  }
  for (int64_t columns : {1, 7, 8, 9, 37, 128, 768}) {
    const int64_t rows = 5, count = rows * columns;
    std::vector<float> x(static_cast<size_t>(count)), weight(static_cast<size_t>(columns)), bias(weight.size());
    for (int64_t i = 0; i < count; ++i) x[static_cast<size_t>(i)] = std::sin(0.3f * static_cast<float>(i)) * 4.0f + 1.5f;
    for (int64_t c = 0; c < columns; ++c) {
      weight[static_cast<size_t>(c)] = 0.5f + 0.01f * static_cast<float>(c);
      bias[static_cast<size_t>(c)] = std::cos(static_cast<float>(c));
    }
    for (int parameters = 0; parameters < 4; ++parameters) {
      const float* w = parameters & 1 ? weight.data() : nullptr;
      const float* b = parameters & 2 ? bias.data() : nullptr;
      std::vector<float> plain(x.size()), wide(x.size()), stats_plain(2 * rows), stats_wide(2 * rows);
      layer_norm_float_rows(x.data(), plain.data(), w, b, rows, columns, 1e-5, stats_plain.data(), stats_plain.data() + rows);
      avx512::layer_norm_float_rows(x.data(), wide.data(), w, b, rows, columns, 1e-5, stats_wide.data(),
                                    stats_wide.data() + rows);
      EXPECT_EQ(std::memcmp(plain.data(), wide.data(), plain.size() * sizeof(float)), 0) << columns << " columns";
      EXPECT_EQ(std::memcmp(stats_plain.data(), stats_wide.data(), stats_plain.size() * sizeof(float)), 0);
      EXPECT_NEAR(plain[0], ((x[0] - stats_plain[0]) * stats_plain[rows]) * (w ? w[0] : 1.0f) + (b ? b[0] : 0.0f),
                  1e-5 * (1 + std::fabs(x[0] * stats_plain[rows])));  // x * rstd - mean * rstd cancels
    }
  }
}

// Softmax's row maximum and numerators (float_activation_loops.h): every length around the
// vector width, a NaN at every position, rows of -inf, and the sum against one in double.
TEST(FloatActivations, RowMaximumAndShiftedExponentials) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(maximum_of(static_cast<const float*>(nullptr), 0), -inf);
  EXPECT_EQ(maximum_of(static_cast<const double*>(nullptr), 0), -double{inf});
  for (int64_t n = 1; n <= 37; ++n) {
    std::vector<float> row(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) row[static_cast<size_t>(i)] = std::sin(static_cast<float>(i) * 1.7f) * 10.0f - 0.5f * static_cast<float>(i % 5);
    const float want = *std::max_element(row.begin(), row.end());
    EXPECT_EQ(maximum_of(row.data(), n), want) << "n " << n;
    const std::vector<double> wide(row.begin(), row.end());
    EXPECT_EQ(maximum_of(wide.data(), n), double{want}) << "n " << n << " (float64)";
    for (int64_t at = 0; at < n; ++at) {
      std::vector<float> with_nan = row;
      with_nan[static_cast<size_t>(at)] = nan;
      EXPECT_TRUE(std::isnan(maximum_of(with_nan.data(), n))) << "n " << n << ", NaN at " << at;
      const std::vector<double> wide_nan(with_nan.begin(), with_nan.end());
      EXPECT_TRUE(std::isnan(maximum_of(wide_nan.data(), n))) << "n " << n << ", NaN at " << at << " (float64)";
    }
    const std::vector<float> masked(static_cast<size_t>(n), -inf);
    EXPECT_EQ(maximum_of(masked.data(), n), -inf);
    // Three rows in one call: the row, the row + 1 and the row + 2, each shifted by its own maximum.
    constexpr int64_t kRows = 3;
    std::vector<float> rows, shifts, numerators(static_cast<size_t>(kRows * n)), totals(kRows);
    for (int64_t r = 0; r < kRows; ++r) {
      for (float v : row) rows.push_back(v + static_cast<float>(r));
      shifts.push_back(want + static_cast<float>(r));
    }
    shifted_exponentials(numerators.data(), rows.data(), shifts.data(), kRows, n, totals.data());
    for (int64_t r = 0; r < kRows; ++r) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        // Against exp of the float difference: its rounding is not the loop's error.
        const size_t at = static_cast<size_t>(r * n + i);
        const double e = std::exp(static_cast<double>(rows[at] - shifts[static_cast<size_t>(r)]));
        EXPECT_NEAR(numerators[at], e, 4e-7 * e) << "n " << n << ", row " << r << " at " << i;
        sum += e;
      }
      EXPECT_NEAR(totals[static_cast<size_t>(r)], sum, 1e-6 * sum) << "n " << n << ", row " << r;
    }
  }
}

TEST(Views, SplitOutputsAreViews) {
  const Tensor x = iota(ScalarType::INT64, {5, 2});
  for (const char* target : {"aten::split.Tensor", "aten::chunk.default", "aten::unbind.int"}) {
    SCOPED_TRACE(target);
    EXPECT_TRUE(KernelRegistry::global().find(target, DeviceKind::kCpu)->is_view);
    Call call{target, {{"self", x}, {"split_size", int64_t{2}}, {"chunks", int64_t{2}}}, {}};
    ASSERT_TRUE(call.run().ok());
    const auto& parts = std::get<std::vector<Tensor>>(call.outputs[0]);
    ASSERT_FALSE(parts.empty());
    for (const auto& p : parts) EXPECT_EQ(p.storage(), x.storage());
  }
}

TEST(Views, ReshapeOfAnUnviewableLayoutCopies) {
  const Tensor x = iota(ScalarType::FLOAT32, {3, 4});
  const Tensor xt = x.as_strided({4, 3}, {1, 4}, 0);
  Call call{"aten::reshape.default", {{"self", xt}, {"shape", std::vector<int64_t>{12}}}, {}};
  ASSERT_TRUE(call.run().ok());
  EXPECT_NE(call.out().storage(), x.storage());
  EXPECT_EQ(values_of(call.out()), (std::vector<double>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11}));
  // view refuses the same request.
  Call view{"aten::view.default", {{"self", xt}, {"size", std::vector<int64_t>{12}}}, {}};
  EXPECT_FALSE(view.run().ok());
}

TEST(Views, ComputingKernelsAreNotViews) {
  for (const auto& target : KernelRegistry::global().targets(DeviceKind::kCpu)) {
    const bool key_split = target.find("_philox_key_split") != std::string::npos;  // makes new keys
    const bool view_like = target.find("view") != std::string::npos ||
                           (target.find("split") != std::string::npos && !key_split) ||
                           target.find("squeeze") != std::string::npos;
    if (view_like) {
      EXPECT_TRUE(KernelRegistry::global().find(target, DeviceKind::kCpu)->is_view) << target;
    }
  }
  for (const char* target : {"aten::add.Tensor", "aten::clone.default", "aten::_to_copy.default", "aten::cat.default",
                             "aten::mm.default", "aten::embedding.default"}) {
    EXPECT_FALSE(KernelRegistry::global().find(target, DeviceKind::kCpu)->is_view) << target;
  }
}

// A contiguous table's rows are copied as bytes, any other through views: a transposed table and
// its contiguous copy give the same rows, each index's.
TEST(Embedding, ContiguousAndStridedTablesGiveTheSameRows) {
  const Tensor stored = iota(ScalarType::FLOAT32, {3, 6});
  const Tensor transposed = stored.as_strided({6, 3}, {1, 6}, 0);  // row r: elements r, r + 6, r + 12
  const Tensor indices = make(ScalarType::INT64, {4}, {5, 0, 5, 2});
  Call strided{"aten::embedding.default", {{"weight", transposed}, {"indices", indices}}, {}};
  ASSERT_TRUE(strided.run().ok());
  Call dense{"aten::embedding.default", {{"weight", contiguous_as(transposed, ScalarType::FLOAT32)}, {"indices", indices}}, {}};
  ASSERT_TRUE(dense.run().ok());
  const std::vector<double> want = {5, 11, 17, 0, 6, 12, 5, 11, 17, 2, 8, 14};
  EXPECT_EQ(values_of(strided.out()), want);
  EXPECT_EQ(values_of(dense.out()), want);
}

// --- The sharding pass's lookup ------------------------------------------------------------------

// nrt::masked_embedding over the shards of a vocabulary (6 rows over 3: 2, 2, 2; over 4 with
// torch.chunk: 2, 2, 2, 0) sums to the whole lookup; indices outside the table are errors.
TEST(MaskedEmbedding, ShardsSumToTheWholeLookup) {
  const Tensor weight = iota(ScalarType::FLOAT32, {6, 3});
  const Tensor indices = make(ScalarType::INT64, {2, 2}, {5, 0, 3, 2});
  Call whole{"aten::embedding.default", {{"weight", weight}, {"indices", indices}}, {}};
  ASSERT_TRUE(whole.run().ok());
  for (int64_t shards : {1, 3, 4}) {
    const int64_t c = (6 + shards - 1) / shards;
    std::vector<double> sum(whole.out().numel(), 0.0);
    for (int64_t r = 0; r < shards; ++r) {
      const int64_t start = std::min<int64_t>(6, r * c), rows = std::min<int64_t>(6, start + c) - start;
      const Tensor shard = weight.as_strided({rows, 3}, {3, 1}, start * 3);
      Call part{"nrt::masked_embedding.default",
                {{"weight", shard}, {"indices", indices}, {"vocab_start", int64_t{start}}, {"vocab_size", int64_t{6}}},
                {}};
      ASSERT_TRUE(part.run().ok()) << part.run().error().message;
      const auto values = values_of(part.out());
      for (size_t i = 0; i < values.size(); ++i) sum[i] += values[i];
    }
    EXPECT_EQ(sum, values_of(whole.out())) << shards << " shards";
  }
  Call outside{"nrt::masked_embedding.default",
               {{"weight", weight}, {"indices", make(ScalarType::INT64, {1}, {6})}, {"vocab_start", int64_t{0}},
                {"vocab_size", int64_t{6}}},
               {}};
  Status s = outside.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("index 6 is out of range for size 6"), std::string::npos) << s.error().message;
  Call not_a_shard{"nrt::masked_embedding.default",
                   {{"weight", weight}, {"indices", indices}, {"vocab_start", int64_t{2}}, {"vocab_size", int64_t{6}}},
                   {}};
  s = not_a_shard.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("rows [2, 8) are not a shard of a 6-row table"), std::string::npos) << s.error().message;
}

// --- Errors and output slots --------------------------------------------------------------------

TEST(Errors, UnsupportedDtypesAreErrorsNamingTheTarget) {
  const Tensor complex = Tensor::empty(ScalarType::COMPLEX64, {2});
  Call add{"aten::add.Tensor", {{"self", complex}, {"other", complex}}, {}};
  Status s = add.run();
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, ErrorCode::KernelError);
  EXPECT_EQ(s.error().message.rfind("aten::add.Tensor: ", 0), 0u) << s.error().message;
  EXPECT_NE(s.error().message.find("c64"), std::string::npos) << s.error().message;

  Call exp{"aten::exp.default", {{"self", Tensor::empty(ScalarType::UINT16, {2})}}, {}};
  EXPECT_FALSE(exp.run().ok());
  Call mm{"aten::mm.default", {{"self", Tensor::empty(ScalarType::BOOL, {2, 2})}, {"mat2", Tensor::empty(ScalarType::BOOL, {2, 2})}}, {}};
  EXPECT_FALSE(mm.run().ok());
  Call conv{"aten::conv2d.default", {{"input", iota(ScalarType::INT32, {1, 1, 3, 3})}, {"weight", iota(ScalarType::INT32, {1, 1, 1, 1})}}, {}};
  EXPECT_FALSE(conv.run().ok());
}

TEST(Errors, MissingAndMistypedArgumentsAreErrors) {
  Call missing{"aten::mm.default", {{"self", iota(ScalarType::FLOAT32, {2, 2})}}, {}};
  Status s = missing.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("mat2"), std::string::npos);
  Call mistyped{"aten::softmax.int", {{"self", iota(ScalarType::FLOAT32, {2})}, {"dim", std::string("x")}}, {}};
  EXPECT_FALSE(mistyped.run().ok());
  Call not_a_list{"aten::cat.default", {{"tensors", int64_t{3}}}, {}};
  EXPECT_FALSE(not_a_list.run().ok());
}

TEST(Errors, ShapesTooLargeToAllocateAreErrors) {
  Call zeros{"aten::zeros.default", {{"size", std::vector<int64_t>{int64_t{1} << 40, int64_t{1} << 40}}}, {}};
  Status s = zeros.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("too large"), std::string::npos) << s.error().message;
  Call expand{"aten::expand.default",
              {{"self", iota(ScalarType::FLOAT32, {1})}, {"size", std::vector<int64_t>{int64_t{1} << 62, 4}}}, {}};
  ASSERT_TRUE(expand.run().ok());  // a view: no memory
  Call clone{"aten::add.Tensor", {{"self", expand.out()}, {"other", 1.0}}, {}};
  s = clone.run();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("too large"), std::string::npos) << s.error().message;
}

TEST(Errors, TooFewOutputSlotsIsAnError) {
  Call add{"aten::add.Tensor", {{"self", iota(ScalarType::FLOAT32, {2})}, {"other", iota(ScalarType::FLOAT32, {2})}}, {}};
  Status s = add.run(0);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().message.find("outputs"), std::string::npos);
}

TEST(OutputSlots, PreallocatedTensorOfAnotherShapeOrDtypeIsReplaced) {
  const Tensor a = iota(ScalarType::FLOAT32, {2, 3});
  for (const Tensor& wrong : {Tensor::empty(ScalarType::FLOAT32, {3, 2}), Tensor::empty(ScalarType::FLOAT64, {2, 3})}) {
    Call add{"aten::add.Tensor", {{"self", a}, {"other", a}}, {wrong}};
    ASSERT_TRUE(add.run().ok());
    EXPECT_NE(add.out().storage(), wrong.storage());
    EXPECT_EQ(add.out().sizes(), (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(values_of(add.out()), (std::vector<double>{0, 2, 4, 6, 8, 10}));
  }
}

TEST(OutputSlots, StridedPreallocatedOutputIsFilledInPlace) {
  // A transposed (non-contiguous) output: element-wise kernels write through its strides, BLAS
  // kernels stage and copy back.
  const Tensor a = iota(ScalarType::FLOAT32, {2, 3});
  Tensor backing = Tensor::empty(ScalarType::FLOAT32, {3, 2});
  const Tensor out = backing.as_strided({2, 3}, {1, 2}, 0);
  Call add{"aten::add.Tensor", {{"self", a}, {"other", a}}, {out}};
  ASSERT_TRUE(add.run().ok());
  EXPECT_EQ(add.out().storage(), backing.storage());
  EXPECT_EQ(values_of(backing), (std::vector<double>{0, 6, 2, 8, 4, 10}));
  Call mm{"aten::mm.default", {{"self", a}, {"mat2", iota(ScalarType::FLOAT32, {3, 3})}}, {out}};
  ASSERT_TRUE(mm.run().ok());
  EXPECT_EQ(mm.out().storage(), backing.storage());
  EXPECT_EQ(values_of(mm.out()), (std::vector<double>{15, 18, 21, 42, 54, 66}));
  // A permuted 3-D output with a broadcast operand: maps visit it in its memory order.
  const Tensor x = iota(ScalarType::FLOAT32, {2, 4, 3}), row = iota(ScalarType::FLOAT32, {3});
  Tensor permuted_backing = Tensor::empty(ScalarType::FLOAT32, {2, 3, 4});
  const Tensor permuted = permuted_backing.as_strided({2, 4, 3}, {12, 1, 4}, 0);
  Call broadcast_add{"aten::add.Tensor", {{"self", x}, {"other", row}}, {permuted}};
  ASSERT_TRUE(broadcast_add.run().ok());
  EXPECT_EQ(broadcast_add.out().storage(), permuted_backing.storage());
  for (int64_t i = 0; i < 2; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      for (int64_t k = 0; k < 3; ++k) {
        EXPECT_EQ(permuted_backing.data<float>()[i * 12 + k * 4 + j], static_cast<float>(i * 12 + j * 3 + k + k));
      }
    }
  }
}

TEST(OutputSlots, SecondaryOutputsMayBeAbsent) {
  const Tensor x = iota(ScalarType::FLOAT32, {2, 4});
  Call ln{"aten::native_layer_norm.default",
          {{"input", x}, {"normalized_shape", std::vector<int64_t>{4}}, {"weight", std::monostate{}},
           {"bias", std::monostate{}}, {"eps", 1e-5}},
          {}};
  ASSERT_TRUE(ln.run(1).ok());
  EXPECT_EQ(ln.out().sizes(), (std::vector<int64_t>{2, 4}));
  Call max{"aten::max.dim", {{"self", x}, {"dim", int64_t{1}}}, {}};
  ASSERT_TRUE(max.run(1).ok());
  EXPECT_EQ(values_of(max.out()), (std::vector<double>{3, 7}));
  Call pool{"aten::max_pool2d_with_indices.default",
            {{"self", iota(ScalarType::FLOAT32, {1, 1, 2, 2})}, {"kernel_size", std::vector<int64_t>{2}}},
            {}};
  ASSERT_TRUE(pool.run(1).ok());
  EXPECT_EQ(values_of(pool.out()), (std::vector<double>{3}));
}

TEST(Creation, EmptyFormsHaveTheRequestedShapeAndDtype) {
  const Tensor like = iota(ScalarType::INT16, {2, 3});
  struct Expect {
    Call call;
    ScalarType dtype;
    std::vector<int64_t> sizes;
  };
  std::vector<Expect> cases = {
      {{"aten::empty.memory_format", {{"size", std::vector<int64_t>{4, 0}}}, {}}, ScalarType::FLOAT32, {4, 0}},
      {{"aten::empty.memory_format", {{"size", std::vector<int64_t>{3}}, {"dtype", ScalarType::BFLOAT16}}, {}},
       ScalarType::BFLOAT16, {3}},
      {{"aten::empty_strided.default", {{"size", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{1, 2}}}, {}},
       ScalarType::FLOAT32, {2, 2}},
      {{"aten::empty_like.default", {{"self", like}}, {}}, ScalarType::INT16, {2, 3}},
      {{"aten::new_empty.default", {{"self", like}, {"size", std::vector<int64_t>{5}}, {"dtype", ScalarType::BOOL}}, {}},
       ScalarType::BOOL, {5}},
      {{"aten::empty_permuted.default",
        {{"size", std::vector<int64_t>{2, 3, 4}}, {"physical_layout", std::vector<int64_t>{0, 2, 1}}, {"dtype", ScalarType::INT32}},
        {}},
       ScalarType::INT32, {2, 3, 4}},
  };
  for (auto& c : cases) {
    SCOPED_TRACE(c.call.target);
    ASSERT_TRUE(c.call.run().ok());
    EXPECT_EQ(c.call.out().dtype(), c.dtype);
    EXPECT_EQ(c.call.out().sizes(), c.sizes);
  }
}

TEST(Creation, EmptyPermutedRefusesALayoutThatIsNotAPermutation) {
  for (const std::vector<int64_t>& layout : {std::vector<int64_t>{0, 0, 1}, std::vector<int64_t>{0, 1}, std::vector<int64_t>{0, 1, 3}}) {
    Call call{"aten::empty_permuted.default", {{"size", std::vector<int64_t>{2, 3, 4}}, {"physical_layout", layout}}, {}};
    const Status status = call.run();
    ASSERT_FALSE(status.ok());
    EXPECT_NE(status.error().message.find("not a permutation"), std::string::npos) << status.error().message;
  }
}

TEST(Symbolic, RuntimeChecksPassAndFail) {
  const Tensor x = iota(ScalarType::FLOAT32, {2, 3});
  Call ok{"aten::_assert_tensor_metadata.default",
          {{"a", x}, {"size", std::vector<int64_t>{2, 3}}, {"dtype", ScalarType::FLOAT32}}, {}};
  EXPECT_TRUE(ok.run(0).ok());
  Call bad_size{"aten::_assert_tensor_metadata.default", {{"a", x}, {"size", std::vector<int64_t>{3, 2}}}, {}};
  EXPECT_FALSE(bad_size.run(0).ok());
  Call bad_dtype{"aten::_assert_tensor_metadata.default", {{"a", x}, {"dtype", ScalarType::INT64}}, {}};
  EXPECT_FALSE(bad_dtype.run(0).ok());
  Call range{"aten::sym_constrain_range_for_size.default", {{"size", int64_t{4}}, {"min", int64_t{2}}}, {}};
  EXPECT_TRUE(range.run(0).ok());
  Call offset{"aten::sym_storage_offset.default", {{"self", x.as_strided({2}, {1}, 5)}}, {}};
  ASSERT_TRUE(offset.run().ok());
  EXPECT_EQ(std::get<int64_t>(offset.outputs[0]), 5);
}

// --- Every dtype an op allows --------------------------------------------------------------------

TEST(Dtypes, ElementwiseReductionsAndJoinsAcceptEveryDtype) {
  for (ScalarType dtype : kAllTypes) {
    SCOPED_TRACE(std::string(nrt::short_name(dtype)));
    const bool is_bool = dtype == ScalarType::BOOL;
    const Tensor a = make(dtype, {2, 3}, is_bool ? std::vector<double>{0, 1, 1, 0, 1, 0} : std::vector<double>{0, 1, 2, 3, 4, 5});
    const Tensor b = make(dtype, {3}, is_bool ? std::vector<double>{1, 1, 0} : std::vector<double>{5, 1, 2});
    auto value = [&](size_t i, size_t j, bool first) { return first ? at(a, static_cast<int64_t>(i * 3 + j)) : at(b, static_cast<int64_t>(j)); };

    Call add{"aten::add.Tensor", {{"self", a}, {"other", b}}, {}};
    ASSERT_TRUE(add.run().ok());
    Call mul{"aten::mul.Tensor", {{"self", a}, {"other", b}}, {}};
    ASSERT_TRUE(mul.run().ok());
    Call maximum{"aten::maximum.default", {{"self", a}, {"other", b}}, {}};
    ASSERT_TRUE(maximum.run().ok());
    Call eq{"aten::eq.Tensor", {{"self", a}, {"other", b}}, {}};
    ASSERT_TRUE(eq.run().ok());
    for (size_t i = 0; i < 2; ++i) {
      for (size_t j = 0; j < 3; ++j) {
        const double x = value(i, j, true), y = value(i, j, false);
        const auto k = static_cast<int64_t>(i * 3 + j);
        EXPECT_EQ(at(add.out(), k), is_bool ? double(x || y) : x + y);
        EXPECT_EQ(at(mul.out(), k), is_bool ? double(x && y) : x * y);
        EXPECT_EQ(at(maximum.out(), k), std::max(x, y));
        EXPECT_EQ(at(eq.out(), k), double(x == y));
      }
    }
    EXPECT_EQ(add.out().dtype(), dtype);

    Call where{"aten::where.self", {{"condition", make(ScalarType::BOOL, {3}, {1, 0, 1})}, {"self", a}, {"other", b}}, {}};
    ASSERT_TRUE(where.run().ok());
    EXPECT_EQ(where.out().dtype(), dtype);
    EXPECT_EQ(at(where.out(), 1), value(0, 1, false));

    Call cat{"aten::cat.default", {{"tensors", std::vector<Tensor>{a, a}}, {"dim", int64_t{0}}}, {}};
    ASSERT_TRUE(cat.run().ok());
    EXPECT_EQ(values_of(cat.out()).size(), 12u);
    EXPECT_EQ(at(cat.out(), 7), at(a, 1));

    Call sum{"aten::sum.dim_IntList", {{"self", a}, {"dim", std::vector<int64_t>{1}}}, {}};
    ASSERT_TRUE(sum.run().ok());
    EXPECT_EQ(sum.out().dtype(), is_floating_dtype(dtype) ? dtype : ScalarType::INT64);
    EXPECT_EQ(at(sum.out(), 1), value(1, 0, true) + value(1, 1, true) + value(1, 2, true));

    Call amax{"aten::amax.default", {{"self", a}, {"dim", std::vector<int64_t>{0}}}, {}};
    ASSERT_TRUE(amax.run().ok());
    EXPECT_EQ(at(amax.out(), 0), std::max(value(0, 0, true), value(1, 0, true)));

    Call argmax{"aten::argmax.default", {{"self", b}}, {}};
    ASSERT_TRUE(argmax.run().ok());
    EXPECT_EQ(at(argmax.out(), 0), 0.0);  // the first maximum: 5 or the first true

    for (ScalarType target : kAllTypes) {
      Call cast{"aten::_to_copy.default", {{"self", a}, {"dtype", target}}, {}};
      ASSERT_TRUE(cast.run().ok()) << nrt::short_name(target);
      EXPECT_EQ(cast.out().dtype(), target);
      EXPECT_EQ(at(cast.out(), 5), target == ScalarType::BOOL ? double(value(1, 2, true) != 0) : value(1, 2, true));
    }
  }
}

TEST(Dtypes, FloatingOnlyOpsRejectIntegersAndAcceptAllFloats) {
  for (ScalarType dtype : kAllTypes) {
    SCOPED_TRACE(std::string(nrt::short_name(dtype)));
    const Tensor x = make(dtype, {1, 2, 2, 2}, {1, 0, 1, 1, 0, 1, 1, 0});
    Call softmax{"aten::softmax.int", {{"self", x}, {"dim", int64_t{-1}}}, {}};
    Call pool{"aten::avg_pool2d.default", {{"self", x}, {"kernel_size", std::vector<int64_t>{2}}}, {}};
    Call ln{"aten::layer_norm.default", {{"input", x}, {"normalized_shape", std::vector<int64_t>{2}}}, {}};
    const bool floating = is_floating_dtype(dtype);
    EXPECT_EQ(softmax.run().ok(), floating);
    EXPECT_EQ(pool.run().ok(), floating);
    EXPECT_EQ(ln.run().ok(), floating);
    if (floating) {
      EXPECT_NEAR(at(pool.out(), 0), 0.75, 1e-2);
    }
  }
}

// --- Conversions and promotion --------------------------------------------------------------------

TEST(Conversions, HalfAndBFloat16RoundTripEveryPattern) {
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    const Half h{static_cast<uint16_t>(bits)};
    const float f = to_float(h);
    // Independently of the bit manipulation: sign * 2^(e-15) * (1 + m/1024), or m * 2^-24.
    const int e = static_cast<int>((bits >> 10) & 0x1f), m = static_cast<int>(bits & 0x3ff);
    const double sign = (bits & 0x8000) ? -1.0 : 1.0;
    if (e == 31) {
      EXPECT_TRUE(m == 0 ? std::isinf(f) : std::isnan(f)) << bits;
    } else {
      ASSERT_EQ(f, sign * (e == 0 ? std::ldexp(m, -24) : std::ldexp(1.0 + m / 1024.0, e - 15))) << bits;
    }
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(convert<Half>(f))));
    } else {
      ASSERT_EQ(convert<Half>(f).bits, h.bits) << bits;
    }
    const BFloat16 b{static_cast<uint16_t>(bits)};
    const float g = to_float(b);
    if (!std::isnan(g)) {
      ASSERT_EQ(convert<BFloat16>(g).bits, b.bits) << bits;
    }
  }
}

TEST(Conversions, NarrowingRoundsToNearestEven) {
  // 1 + 2^-11 lies halfway between two halves: ties to the even one (1.0); just above rounds up.
  EXPECT_EQ(to_float(convert<Half>(1.0f + 0x1p-11f)), 1.0f);
  EXPECT_EQ(to_float(convert<Half>(1.0f + 0x1p-11f + 0x1p-20f)), 1.0f + 0x1p-10f);
  EXPECT_TRUE(std::isinf(to_float(convert<Half>(65520.0f))));
  EXPECT_EQ(to_float(convert<Half>(65519.0f)), 65504.0f);
  EXPECT_EQ(to_float(convert<BFloat16>(1.0f + 0x1p-8f)), 1.0f);
  EXPECT_EQ(to_float(convert<BFloat16>(1.0f + 0x1p-8f + 0x1p-16f)), 1.0f + 0x1p-7f);
  EXPECT_EQ(to_float(convert<Half>(0x1p-25f)), 0.0f);         // halfway to the smallest subnormal: even (0)
  EXPECT_EQ(to_float(convert<Half>(0x1.8p-25f)), 0x1p-24f);   // above halfway: rounds up
}

TEST(Conversions, FloatToIntegerFollowsTorchOnX86) {
  EXPECT_EQ(convert<int32_t>(-2.7f), -2);
  EXPECT_EQ(convert<uint8_t>(300.2f), 44);
  EXPECT_EQ(convert<uint8_t>(-1.0f), 255);
  EXPECT_EQ(convert<int8_t>(200.0), -56);
  EXPECT_EQ(convert<int32_t>(3e9), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(convert<int64_t>(3e9), 3000000000LL);
  EXPECT_EQ(convert<int64_t>(1e19), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert<int64_t>(std::nan("")), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(convert<int16_t>(std::nan("")), 0);  // INT32_MIN wrapped to 16 bits
  EXPECT_TRUE(convert<bool>(std::nan("")));
  EXPECT_EQ(convert<int8_t>(int64_t{300}), 44);
}

TEST(Promotion, FollowsTorchPromoteTypes) {
  using T = ScalarType;
  EXPECT_EQ(promote_types(T::UINT8, T::INT8), T::INT16);
  EXPECT_EQ(promote_types(T::UINT8, T::INT32), T::INT32);
  EXPECT_EQ(promote_types(T::BOOL, T::UINT8), T::UINT8);
  EXPECT_EQ(promote_types(T::INT64, T::FLOAT16), T::FLOAT16);
  EXPECT_EQ(promote_types(T::FLOAT16, T::BFLOAT16), T::FLOAT32);
  EXPECT_EQ(promote_types(T::BFLOAT16, T::FLOAT64), T::FLOAT64);
  EXPECT_EQ(promote_types(T::INT16, T::INT32), T::INT32);
  EXPECT_EQ(promote_types(T::COMPLEX64, T::FLOAT32), T::UNKNOWN);
  for (ScalarType a : kAllTypes) {
    for (ScalarType b : kAllTypes) EXPECT_EQ(promote_types(a, b), promote_types(b, a));
  }
}

TEST(Promotion, ResultTypeWeighsTensorsZeroDimAndScalars) {
  using T = ScalarType;
  using P = PromotionClass;
  auto rt = [](std::vector<PromotionOperand> ops) { return result_type(ops); };
  EXPECT_EQ(rt({{T::INT32, P::kTensor}, {T::INT64, P::kZeroDim}}), T::INT32);
  EXPECT_EQ(rt({{T::INT32, P::kTensor}, {T::FLOAT64, P::kZeroDim}}), T::FLOAT64);
  EXPECT_EQ(rt({{T::INT32, P::kTensor}, {T::FLOAT32, P::kScalar}}), T::FLOAT32);
  EXPECT_EQ(rt({{T::FLOAT16, P::kTensor}, {T::FLOAT32, P::kScalar}}), T::FLOAT16);
  EXPECT_EQ(rt({{T::BOOL, P::kTensor}, {T::INT64, P::kScalar}}), T::INT64);
  EXPECT_EQ(rt({{T::UINT8, P::kTensor}, {T::INT64, P::kScalar}}), T::UINT8);
  EXPECT_EQ(rt({{T::FLOAT32, P::kZeroDim}, {T::FLOAT16, P::kTensor}}), T::FLOAT16);
  EXPECT_EQ(rt({{T::INT64, P::kScalar}, {T::BOOL, P::kScalar}}), T::INT64);
  EXPECT_EQ(rt({{T::INT8, P::kZeroDim}, {T::FLOAT32, P::kScalar}}), T::FLOAT32);
}

// --- BLAS at sizes and layouts beyond the goldens ---------------------------------------------------

// With intra-op threads the kernels that split their work give the same bits as one thread, at
// sizes that do split (intra_op_threads.h): an element-wise map, an activation, a convolution
// through im2col, a depthwise one, max pooling, attention over heads, and layer and group norms
// over rows. oneDNN's products keep
// one thread's bits on AVX-512 CPUs only: with its AVX2 kernels the bits depend on how the work
// splits (an AMD EPYC of 2017: sgemm 128x768x768 differs in 1382 of its 98304 sums at 3 threads,
// by up to 3.8e-6, in none at 2 or 4), so there they agree within float32 rounding.
std::vector<double> every_value(const Tensor& t) {
  EXPECT_TRUE(t.is_contiguous());
  return values_of(t);
}

Tensor noise(std::vector<int64_t> sizes, uint32_t seed) {
  Tensor t = Tensor::empty(ScalarType::FLOAT32, std::move(sizes));
  float* p = t.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    seed = seed * 1664525u + 1013904223u;
    p[i] = static_cast<float>(seed >> 8) / static_cast<float>(1 << 24) - 0.5f;
  }
  return t;
}

TEST(IntraOpThreads, SplitKernelsGiveTheBitsOfOneThread) {
  const Tensor big = noise({1 << 18}, 1), other = noise({1 << 18}, 2);
  const Tensor image = noise({1, 16, 64, 64}, 3), weight = noise({32, 16, 3, 3}, 4), depthwise = noise({16, 1, 3, 3}, 5);
  const Tensor q = noise({1, 8, 64, 32}, 6), k = noise({1, 8, 64, 32}, 7), v = noise({1, 8, 64, 32}, 8);
  // oneDNN's blocked and pointwise convolutions and its sgemm at sizes its threads split.
  const Tensor wide = noise({1, 64, 56, 56}, 9), wide_weight = noise({64, 64, 3, 3}, 10), pointwise = noise({96, 64, 1, 1}, 11);
  const Tensor rows = noise({128, 768}, 12), columns = noise({768, 768}, 13);
  std::vector<Call> calls = {
      {"aten::conv2d.default", {{"input", wide}, {"weight", wide_weight}, {"bias", noise({64}, 14)},
                                {"stride", std::vector<int64_t>{1, 1}}, {"padding", std::vector<int64_t>{1, 1}}}, {}},
      {"aten::conv2d.default", {{"input", wide}, {"weight", pointwise}}, {}},
      {"aten::mm.default", {{"self", rows}, {"mat2", columns}}, {}},
      {"aten::mul.Tensor", {{"self", big}, {"other", other}}, {}},
      {"aten::gelu.default", {{"self", big}}, {}},
      // Split where a thread's part is not whole vectors: the last n % 8 elements of the serial
      // loop are the only ones computed one at a time, whatever the split.
      {"aten::gelu.default", {{"self", noise({(1 << 14) + 5}, 15)}}, {}},
      {"aten::silu.default", {{"self", noise({(1 << 13) + 3}, 16)}}, {}},
      {"aten::conv2d.default", {{"input", image}, {"weight", weight}, {"bias", RuntimeValue{}}, {"stride", std::vector<int64_t>{1, 1}},
                                {"padding", std::vector<int64_t>{1, 1}}}, {}},
      {"aten::conv2d.default", {{"input", image}, {"weight", depthwise}, {"bias", RuntimeValue{}}, {"stride", std::vector<int64_t>{2, 2}},
                                {"padding", std::vector<int64_t>{1, 1}}, {"dilation", std::vector<int64_t>{1, 1}}, {"groups", int64_t{16}}}, {}},
      {"aten::max_pool2d.default", {{"self", image}, {"kernel_size", std::vector<int64_t>{3, 3}}, {"stride", std::vector<int64_t>{2, 2}},
                                    {"padding", std::vector<int64_t>{1, 1}}}, {}},
      {"aten::scaled_dot_product_attention.default", {{"query", q}, {"key", k}, {"value", v}}, {}},
      {"aten::layer_norm.default", {{"input", rows}, {"normalized_shape", std::vector<int64_t>{768}},
                                    {"weight", noise({768}, 17)}, {"bias", noise({768}, 18)}}, {}},
      {"aten::group_norm.default", {{"input", image}, {"num_groups", int64_t{4}}}, {}},
  };
  const size_t onednn_calls = 3;  // the first three
  const bool onednn_keeps_bits = __builtin_cpu_supports("avx512f");
  for (size_t c = 0; c < calls.size(); ++c) {
    Call& call = calls[c];
    SCOPED_TRACE(call.target);
    set_intra_op_threads(1);
    Call one = call;
    ASSERT_TRUE(one.run().ok());
    set_intra_op_threads(3);
    Call three = call;
    ASSERT_TRUE(three.run().ok());
    const auto a = every_value(one.out()), b = every_value(three.out());
    ASSERT_EQ(a.size(), b.size());
    if (c >= onednn_calls || onednn_keeps_bits) {
      EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(double)), 0);  // bits, NaNs included
      continue;
    }
    // Sums of at most 768 products of values in [-0.5, 0.5]: measured apart by at most 6e-6.
    for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-4) << "element " << i;
  }
  set_intra_op_threads(0);
}

// max_pool2d over a channels-last input with the plan's channels-last mark (resnet's stem pool,
// convolution_epilogue.h): its result is channels-last and holds the bits of the planes' loop over
// the same values NCHW, a NaN included, for windows with padding, ceil_mode and dilation; without
// the mark, or with indices, it takes the planes' loop.
TEST(ShapePaths, ChannelsLastMaxPoolGivesThePlanesLoopsBits) {
  // 19 channels: one block of 16 and 3 lanes; 70: four blocks at once, two more, 6 lanes.
  for (int64_t channels : {19, 70}) {
    Tensor image = noise({2, channels, 9, 11}, 41);
    image.data<float>()[5 * 99 + 5 * 11 + 6] = NAN;  // image 0, channel 5, row 5, column 6: in a window of each
    image.data<float>()[5 * 99 + 5 * 11 + 7] = -NAN;  // the column after: the first NaN of a window stays
    image.data<float>()[(2 * channels - 2) * 99 + 3 * 11 + 2] = NAN;  // image 1, its channel in the last lanes
    // The same values laid out NHWC, viewed [N, C, H, W].
    Tensor rows = Tensor::empty(ScalarType::FLOAT32, {2, 9, 11, channels});
    for (int64_t n = 0; n < 2; ++n) {
      for (int64_t c = 0; c < channels; ++c) {
        for (int64_t i = 0; i < 99; ++i) {
          rows.data<float>()[(n * 99 + i) * channels + c] = image.data<float>()[(n * channels + c) * 99 + i];
        }
      }
    }
    const Tensor nhwc = rows.as_strided({2, channels, 9, 11}, {9 * 11 * channels, 1, 11 * channels, channels}, 0);
    using List = std::vector<int64_t>;
    struct Window {
      List kernel, stride, padding, dilation;
      bool ceil_mode;
    };
    for (const Window& w : {Window{{3, 3}, {2, 2}, {1, 1}, {1, 1}, false}, Window{{2, 3}, {1, 2}, {0, 1}, {1, 1}, true},
                            Window{{3, 3}, {2, 1}, {1, 1}, {2, 2}, false}}) {
      auto call = [&](const Tensor& self, bool marked) {
        Call c{"aten::max_pool2d.default", {{"self", self}, {"kernel_size", w.kernel}, {"stride", w.stride},
                                            {"padding", w.padding}, {"dilation", w.dilation}, {"ceil_mode", w.ceil_mode}}, {}};
        if (marked) c.args.push_back({std::string(convolution_epilogue::kChannelsLastOutput), true});
        EXPECT_TRUE(c.run().ok());
        return c;
      };
      const Call planes = call(image, false), marked = call(nhwc, true), unmarked = call(nhwc, false);
      const Tensor& out = marked.out();
      EXPECT_FALSE(out.is_contiguous()) << "the marked pool writes channels-last";
      EXPECT_EQ(out.strides()[1], 1);
      auto bits = [](const Tensor& t) {
        const Tensor c = contiguous_as(t, ScalarType::FLOAT32);
        std::vector<uint32_t> b(static_cast<size_t>(c.numel()));
        std::memcpy(b.data(), c.data<float>(), b.size() * sizeof(float));
        return b;
      };
      const std::vector<uint32_t> want = bits(planes.out());
      EXPECT_EQ(bits(out), want) << channels << " channels";
      const std::vector<double> got = values_of(contiguous_as(out, ScalarType::FLOAT32));
      EXPECT_EQ(std::count_if(got.begin(), got.end(), [](double v) { return std::isnan(v); }) > 1, true);
      EXPECT_EQ(bits(unmarked.out()), want);
      // The row of CPUs without AVX-512 (the kernel above took this CPU's), row by row.
      const ChannelsLastPoolWindow window{{w.kernel[0], w.kernel[1]}, {w.stride[0], w.stride[1]},
                                          {w.padding[0], w.padding[1]}, {w.dilation[0], w.dilation[1]}, 9, 11,
                                          channels, 11 * channels, channels, channels};
      Tensor plain = Tensor::empty(ScalarType::FLOAT32, out.sizes());
      plain = plain.as_strided(out.sizes(), out.strides(), 0);
      const int64_t out_h = out.sizes()[2], out_w = out.sizes()[3];
      for (int64_t n = 0; n < 2; ++n) {
        for (int64_t oy = 0; oy < out_h; ++oy) {
          max_pool_row(window, rows.data<float>() + n * 99 * channels, oy, out_w,
                       plain.data<float>() + (n * out_h + oy) * out_w * channels);
        }
      }
      EXPECT_EQ(bits(plain), want) << channels << " channels, the plain row";
    }
  }
}

// Paths taken by shape: a convolution over one position per image runs as a matrix-vector product
// (against the dot products), and adaptive average pooling sums eight planes at once (38 planes: a
// partial block at the end; float32 against float64).
TEST(ShapePaths, OnePositionConvolutionAndBlockedPoolingMatchReferences) {
  auto as_double = [](const Tensor& t) { return make(ScalarType::FLOAT64, t.sizes(), values_of(t)); };
  auto expect_close = [](const std::vector<double>& got, const std::vector<double>& want) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5 * (1 + std::fabs(want[i]))) << "element " << i;
  };
  const Tensor pooled = noise({2, 96, 1, 1}, 31), squeeze = noise({4, 96, 1, 1}, 32), bias = noise({4}, 33);
  auto conv = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    Call call{"aten::conv2d.default", {{"input", x}, {"weight", w}, {"bias", b}}, {}};
    EXPECT_TRUE(call.run().ok());
    return values_of(call.out());
  };
  std::vector<double> dots(8);
  for (int64_t n = 0; n < 2; ++n) {
    for (int64_t o = 0; o < 4; ++o) {
      double sum = bias.data<float>()[o];
      for (int64_t c = 0; c < 96; ++c) sum += double{squeeze.data<float>()[o * 96 + c]} * pooled.data<float>()[n * 96 + c];
      dots[static_cast<size_t>(n * 4 + o)] = sum;
    }
  }
  expect_close(conv(pooled, squeeze, bias), dots);
  expect_close(conv(as_double(pooled), as_double(squeeze), as_double(bias)), dots);
  const Tensor planes = noise({2, 19, 5, 7}, 34);
  auto pool = [](const Tensor& x) {
    Call call{"aten::adaptive_avg_pool2d.default", {{"self", x}, {"output_size", std::vector<int64_t>{3, 2}}}, {}};
    EXPECT_TRUE(call.run().ok());
    EXPECT_EQ(call.out().sizes(), (std::vector<int64_t>{2, 19, 3, 2}));
    return values_of(call.out());
  };
  expect_close(pool(planes), pool(as_double(planes)));
}

// A loaded program's weights (Storage::borrow_constant) let oneDNN keep their reordered copy; a
// storage that replaces a freed one at the same address, with other bytes, must not get it.
TEST(Convolution, KeptWeightsFollowTheirStorage) {
  const Tensor image = noise({1, 64, 16, 16}, 21), first = noise({64, 64, 3, 3}, 22), second = noise({64, 64, 3, 3}, 23);
  auto conv = [&](const Tensor& weight) {
    Call call{"aten::conv2d.default", {{"input", image}, {"weight", weight}, {"padding", std::vector<int64_t>{1, 1}}}, {}};
    EXPECT_TRUE(call.run().ok());
    return every_value(call.out());
  };
  const std::vector<double> expected_first = conv(first), expected_second = conv(second);
  ASSERT_NE(expected_first, expected_second);
  std::vector<float> bytes(first.data<float>(), first.data<float>() + first.numel());
  auto constant_view = [&] {
    auto storage = Storage::borrow_constant(bytes.data(), bytes.size() * sizeof(float), nullptr);
    EXPECT_TRUE(storage->constant());
    return Tensor(storage, ScalarType::FLOAT32, {64, 64, 3, 3}, Tensor::contiguous_strides({64, 64, 3, 3}));
  };
  {
    const Tensor weight = constant_view();
    EXPECT_EQ(conv(weight), expected_first);
    EXPECT_EQ(conv(weight), expected_first) << "the kept copy";
  }
  std::copy(second.data<float>(), second.data<float>() + second.numel(), bytes.begin());
  const Tensor refilled = constant_view();  // same address, another storage
  EXPECT_EQ(conv(refilled), expected_second);
}

// A fused convolution node (executor/runtime/convolution_fusion.h) keeps its folded weights
// while the storages they came from live: refilling a batch norm statistic at the same address,
// in another storage, gives the new answer, that of the same call on storages nothing is kept for.
TEST(Convolution, KeptFoldedWeightsFollowEveryStorage) {
  const Tensor image = noise({1, 16, 12, 12}, 31), weight = noise({32, 16, 3, 3}, 32);
  std::vector<float> mean(32, 0.25f), var(32, 2.0f);
  auto vector_tensor = [](std::vector<float>& bytes, bool constant) {
    auto storage = constant ? Storage::borrow_constant(bytes.data(), bytes.size() * sizeof(float), nullptr)
                            : Storage::borrow(bytes.data(), bytes.size() * sizeof(float), nullptr);
    return Tensor(storage, ScalarType::FLOAT32, {32}, {1});
  };
  std::vector<float> weight_bytes(weight.data<float>(), weight.data<float>() + weight.numel());
  auto fused = [&](bool constant) {
    const Tensor w(constant ? Storage::borrow_constant(weight_bytes.data(), weight_bytes.size() * sizeof(float), nullptr)
                            : Storage::borrow(weight_bytes.data(), weight_bytes.size() * sizeof(float), nullptr),
                   ScalarType::FLOAT32, {32, 16, 3, 3}, Tensor::contiguous_strides({32, 16, 3, 3}));
    const std::vector<std::pair<std::string, RuntimeValue>> args = {
        {"input", image}, {"weight", w}, {"padding", std::vector<int64_t>{1, 1}},
        {std::string(convolution_epilogue::kBatchNormMean), vector_tensor(mean, constant)},
        {std::string(convolution_epilogue::kBatchNormVar), vector_tensor(var, constant)},
        {std::string(convolution_epilogue::kBatchNormEps), 1e-5},
        {std::string(convolution_epilogue::kActivation), std::string("relu")}};
    std::vector<NamedValue> inputs;
    for (const auto& [name, value] : args) inputs.push_back({name, &value});
    std::vector<RuntimeValue> outputs(1);
    KernelContext ctx("aten::conv2d.default", inputs, outputs, Device{});
    const KernelInfo* info = KernelRegistry::global().find(convolution_epilogue::kKernelTarget, DeviceKind::kCpu);
    EXPECT_NE(info, nullptr);
    EXPECT_TRUE(info != nullptr && info->fn(ctx).ok());
    return every_value(std::get<Tensor>(outputs[0]));
  };
  const std::vector<double> first = fused(false);
  EXPECT_EQ(fused(true), first);
  EXPECT_EQ(fused(true), first) << "the kept fold";
  std::fill(var.begin(), var.end(), 0.5f);
  const std::vector<double> second = fused(false);
  ASSERT_NE(first, second);
  EXPECT_EQ(fused(true), second) << "a kept fold outlived the storage of running_var";
  bool clipped = false;
  for (double v : second) {
    EXPECT_GE(v, 0.0);
    clipped = clipped || v == 0.0;
  }
  EXPECT_TRUE(clipped) << "relu applied";
}

// linear's y = x w^T + bias in double, x [m, k], w [n, k] the floats at `w`, bias [n].
std::vector<double> linear_in_double(const Tensor& x, const float* w, const Tensor& bias) {
  const int64_t m = x.sizes()[0], k = x.sizes()[1], n = bias.sizes()[0];
  std::vector<double> y(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = at(bias, j);
      for (int64_t p = 0; p < k; ++p) sum += at(x, i * k + p) * double(w[j * k + p]);
      y[static_cast<size_t>(i * n + j)] = sum;
    }
  }
  return y;
}

// Whether `got` agrees with `want` within 1e-5, absolute plus relative.
bool agree(const std::vector<double>& got, const std::vector<double>& want) {
  bool same = got.size() == want.size();
  for (size_t i = 0; same && i < got.size(); ++i) same = std::abs(got[i] - want[i]) <= 1e-5 + 1e-5 * std::abs(want[i]);
  return same;
}

// linear with a loaded program's weights (a constant storage) runs oneDNN's product with them
// packed once (onednn_linear.h): it agrees with the product of the same bytes in a storage nothing
// is kept for, and a storage refilled at the same address gets the new answer. 1024 outputs make
// rows of 4 KiB, which a plain layout pads (onednn_linear.cc).
TEST(Linear, KeptPackedWeightsAgreeAndFollowTheirStorage) {
  for (const int64_t outputs : {int64_t{96}, int64_t{1024}}) {
    SCOPED_TRACE(outputs);
    // 48 x 128 x outputs: past the size below which linear keeps to gemm.
    const Tensor x = noise({48, 128}, 41), first = noise({outputs, 128}, 42), second = noise({outputs, 128}, 43);
    const Tensor bias = noise({outputs}, 44);
    std::vector<float> bytes(first.data<float>(), first.data<float>() + first.numel());
    auto linear = [&](bool constant) {
      auto storage = constant ? Storage::borrow_constant(bytes.data(), bytes.size() * sizeof(float), nullptr)
                              : Storage::borrow(bytes.data(), bytes.size() * sizeof(float), nullptr);
      const Tensor weight(storage, ScalarType::FLOAT32, {outputs, 128}, {128, 1});
      Call call{"aten::linear.default", {{"input", x}, {"weight", weight}, {"bias", bias}}, {}};
      EXPECT_TRUE(call.run().ok());
      return every_value(call.out());
    };
    const std::vector<double> expected_first = linear(false);
    EXPECT_TRUE(agree(expected_first, linear_in_double(x, bytes.data(), bias))) << "the product in double, from the bytes";
    EXPECT_TRUE(agree(linear(true), expected_first));
    EXPECT_TRUE(agree(linear(true), expected_first)) << "the kept packing";
    std::copy(second.data<float>(), second.data<float>() + second.numel(), bytes.begin());
    const std::vector<double> expected_second = linear(false);
    ASSERT_FALSE(agree(expected_first, expected_second));
    EXPECT_TRUE(agree(linear(true), expected_second)) << "a kept packing outlived its storage";
  }
}

// Values kept from a constant storage serve another live constant storage of the same bytes (two
// loads of one mapped file), and no storage once the first is gone and its address reused.
TEST(KeptByStorage, SharedByLiveStoragesOfTheSameBytesOnly) {
  KeptByStorage<int, int, 1> kept(1024);
  std::vector<float> bytes(16, 1.0f);
  const size_t size = bytes.size() * sizeof(float);
  std::shared_ptr<const Storage> first = Storage::borrow_constant(bytes.data(), size, nullptr);
  bool now_kept = false;
  EXPECT_EQ(kept.keep(7, {first}, 42, 64, &now_kept), 42);
  EXPECT_TRUE(now_kept);
  const auto second = Storage::borrow_constant(bytes.data(), size, nullptr);
  EXPECT_EQ(kept.find(7, {second}), std::optional<int>(42)) << "a live storage of the same bytes";
  EXPECT_EQ(kept.find(7, {Storage::borrow_constant(bytes.data(), size / 2, nullptr)}), std::nullopt)
      << "other bytes at the same address";
  EXPECT_EQ(kept.keep(7, {first}, 43, 64, &now_kept), 43) << "that lookup dropped the entry";
  EXPECT_EQ(kept.find(7, {Storage::borrow(bytes.data(), size, nullptr)}), std::nullopt) << "not constant";
  EXPECT_EQ(kept.keep(7, {first}, 44, 64, &now_kept), 44);
  first.reset();  // the storage it was kept from is gone: its address may hold other bytes now
  EXPECT_EQ(kept.find(7, {second}), std::nullopt);
  EXPECT_EQ(kept.keep(8, {second}, 9, 2048, &now_kept), 9);
  EXPECT_FALSE(now_kept) << "past the bound";
  EXPECT_EQ(kept.bytes(), 0u);
}

// How many of the pages of [begin, begin + bytes) are mapped into this process now (bit 63 of
// /proc/self/pagemap's entry: present), -1 when it cannot be read.
int64_t present_pages(const void* begin, size_t bytes) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const uintptr_t first = reinterpret_cast<uintptr_t>(begin) / page;
  const uintptr_t last = (reinterpret_cast<uintptr_t>(begin) + bytes + page - 1) / page;
  FILE* pagemap = std::fopen("/proc/self/pagemap", "rb");
  if (pagemap == nullptr) return -1;
  std::vector<uint64_t> entries(last - first);
  const bool read = std::fseek(pagemap, static_cast<long>(first * sizeof(uint64_t)), SEEK_SET) == 0 &&
                    std::fread(entries.data(), sizeof(uint64_t), entries.size(), pagemap) == entries.size();
  std::fclose(pagemap);
  if (!read) return -1;
  int64_t present = 0;
  for (uint64_t entry : entries) present += (entry >> 63) & 1;
  return present;
}

// Weights in a mapped file (Storage::borrow_file_mapping, as Executor::load gives a .nrt's) that
// oneDNN keeps packed release their pages (storage.h): the product is right before and after, the
// weights read back from the file unchanged, and the page before them, which other bytes share,
// stays. Other memory is never released: its contents would be lost.
TEST(Linear, KeptWeightsReleaseTheirFilePages) {
  const int64_t outputs = 1024, inputs = 128;
  const Tensor x = noise({48, inputs}, 51), values = noise({outputs, inputs}, 52), bias = noise({outputs}, 53);
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE)), weight_bytes = values.nbytes();
  // One page of other bytes, the weights, one page after.
  const std::string path = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") +
                           "/kept_weights_release_" + std::to_string(getpid()) + ".bin";
  {
    std::vector<uint8_t> file(page + weight_bytes + page, 0x5a);
    std::memcpy(file.data() + page, values.data<float>(), weight_bytes);
    FILE* out = std::fopen(path.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    ASSERT_EQ(std::fwrite(file.data(), 1, file.size(), out), file.size());
    std::fclose(out);
  }
  const size_t file_bytes = page + weight_bytes + page;
  const int fd = open(path.c_str(), O_RDONLY);
  ASSERT_GE(fd, 0);
  void* mapping = mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  std::remove(path.c_str());  // the mapping keeps the file's pages
  ASSERT_NE(mapping, MAP_FAILED);
  std::shared_ptr<const void> owner(mapping, [file_bytes](const void* at) { munmap(const_cast<void*>(at), file_bytes); });
  auto storage = Storage::borrow_file_mapping(mapping, file_bytes, owner);
  EXPECT_TRUE(storage->constant());
  EXPECT_TRUE(storage->file_mapping());
  const Tensor weight(storage, ScalarType::FLOAT32, {outputs, inputs}, {inputs, 1},
                      static_cast<int64_t>(page / sizeof(float)));
  const auto* bytes = static_cast<const volatile uint8_t*>(mapping);
  for (size_t at = 0; at < file_bytes; at += page) (void)bytes[at];  // every page present
  const uint8_t* weights_at = static_cast<const uint8_t*>(mapping) + page;
  const int64_t weight_pages = static_cast<int64_t>(weight_bytes / page);
  ASSERT_EQ(present_pages(weights_at, weight_bytes), weight_pages);

  // The product of `input`'s rows, and whether it agrees with one in double from the same values.
  auto linear_agrees = [&](const Tensor& input) {
    Call call{"aten::linear.default", {{"input", input}, {"weight", weight}, {"bias", bias}}, {}};
    EXPECT_TRUE(call.run().ok());
    return agree(every_value(call.out()), linear_in_double(input, values.data<float>(), bias));
  };
  EXPECT_TRUE(linear_agrees(x));
  EXPECT_EQ(present_pages(weights_at, weight_bytes), 0) << "the packed copy serves; the file's pages were kept";
  EXPECT_EQ(present_pages(mapping, page), 1) << "the page before the weights is not theirs";
  const size_t kept_bytes = kept_weights_bytes();
  EXPECT_TRUE(linear_agrees(x)) << "the kept packing";
  // Another row count builds another primitive, which shares the copy: nothing more is kept, and
  // the file's pages are not read again.
  EXPECT_TRUE(linear_agrees(noise({32, inputs}, 54)));
  EXPECT_EQ(kept_weights_bytes(), kept_bytes);
  EXPECT_EQ(present_pages(weights_at, weight_bytes), 0);
  EXPECT_EQ(std::memcmp(weights_at, values.data<float>(), weight_bytes), 0) << "read back from the file";

  // Memory that is not a file mapping keeps its pages and contents.
  std::vector<float> owned(values.data<float>(), values.data<float>() + values.numel());
  for (const auto& other : {Storage::borrow_constant(owned.data(), weight_bytes, nullptr),
                            Storage::borrow(owned.data(), weight_bytes, nullptr)}) {
    EXPECT_FALSE(other->file_mapping());
    other->release_pages(owned.data(), weight_bytes);
    EXPECT_EQ(std::memcmp(owned.data(), values.data<float>(), weight_bytes), 0);
  }
}

std::vector<double> reference_product(const Tensor& a, const Tensor& b) {
  const int64_t m = a.sizes()[0], k = a.sizes()[1], n = b.sizes()[1];
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t p = 0; p < k; ++p) {
      const double x = at(a, i * k + p);
      for (int64_t j = 0; j < n; ++j) c[static_cast<size_t>(i * n + j)] += x * at(b, p * n + j);
    }
  }
  return c;
}

TEST(Blas, ProductsOfLargerTransposedAndSlicedOperands) {
  const int64_t m = 67, k = 129, n = 65;
  std::vector<double> av(static_cast<size_t>(m * k)), bv(static_cast<size_t>(k * n * 2));
  for (size_t i = 0; i < av.size(); ++i) av[i] = std::sin(static_cast<double>(i));
  for (size_t i = 0; i < bv.size(); ++i) bv[i] = std::cos(static_cast<double>(i) * 0.7);
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT64, ScalarType::BFLOAT16}) {
    SCOPED_TRACE(std::string(nrt::short_name(dtype)));
    // a stored transposed; b every other column of a wider matrix.
    const Tensor a_storage = make(dtype, {k, m}, av);
    const Tensor a = a_storage.as_strided({m, k}, {1, m}, 0);
    const Tensor b_storage = make(dtype, {k, 2 * n}, bv);
    const Tensor b = b_storage.as_strided({k, n}, {2 * n, 2}, 0);
    Call mm{"aten::mm.default", {{"self", a}, {"mat2", b}}, {}};
    ASSERT_TRUE(mm.run().ok());
    const std::vector<double> expected = reference_product(a, b);
    const double tolerance = dtype == ScalarType::FLOAT64 ? 1e-10 : dtype == ScalarType::FLOAT32 ? 1e-3 : 0.5;
    for (size_t i = 0; i < expected.size(); ++i) {
      ASSERT_NEAR(at(mm.out(), static_cast<int64_t>(i)), expected[i], tolerance) << i;
    }
  }
}

// gemm.h's promise with beta 0, through oneDNN (float32) and OpenBLAS (float64) alike: what the
// output held, NaN included, does not reach the result.
// pow with the scalar exponents torch computes without pow (2, 3, -2, 0.5, -0.5, -1; the
// goldens cover 2 and 0.5) agrees with std::pow to float32's rounding, in both float dtypes.
TEST(Pow, ScalarExponentsWithoutPowAgreeWithPow) {
  for (const ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT64}) {
    const Tensor base = make(dtype, {6}, {0.5, 1.0, 1.5, 2.25, 3.0, 7.75});
    for (const double exponent : {2.0, 3.0, -2.0, 0.5, -0.5, -1.0, 1.5}) {
      Call call{"aten::pow.Tensor_Scalar", {{"self", base}, {"exponent", exponent}}, {}};
      ASSERT_TRUE(call.run().ok()) << exponent;
      ASSERT_EQ(call.out().dtype(), dtype);
      for (int64_t i = 0; i < 6; ++i) {
        const double want = std::pow(at(base, i), exponent);
        EXPECT_NEAR(at(call.out(), i), want, std::abs(want) * 1e-6) << "x = " << at(base, i) << ", exponent " << exponent;
      }
    }
  }
}

TEST(Blas, BetaZeroIgnoresWhatTheOutputHeld) {
  for (ScalarType dtype : {ScalarType::FLOAT32, ScalarType::FLOAT64}) {
    SCOPED_TRACE(std::string(nrt::short_name(dtype)));
    const Tensor a = make(dtype, {2, 3}, {1, 2, 3, 4, 5, 6}), b = make(dtype, {3, 2}, {1, 0, 0, 1, 1, 1});
    const Tensor c = make(dtype, {2, 2}, {NAN, NAN, INFINITY, NAN});
    gemm(a, b, c, 1.0, 0.0);
    EXPECT_EQ(values_of(c), (std::vector<double>{4, 5, 10, 11}));
  }
}

TEST(Blas, IntegerProductsAreExact) {
  const Tensor a = make(ScalarType::INT64, {2, 2}, {3000000000.0, 1, 2, 3});
  const Tensor b = make(ScalarType::INT64, {2, 2}, {3, 0, 1, 1});
  Call mm{"aten::mm.default", {{"self", a}, {"mat2", b}}, {}};
  ASSERT_TRUE(mm.run().ok());
  EXPECT_EQ(values_of(mm.out()), (std::vector<double>{9000000001.0, 1, 9, 3}));
}

}  // namespace
}  // namespace nrt::exec::cpu
