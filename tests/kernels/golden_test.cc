// Runs every case of tests/kernels/goldens/manifest.json (written by make_goldens.py) through the
// CPU kernel registry and compares the results with NumPy's.
//
// Each case runs twice when it can: with empty output slots (the kernel allocates) and with
// preallocated outputs (the executor's planned-memory path): a tensor placed at an offset inside a
// larger storage poisoned with 0xff bytes, which the kernel must fill in place without touching
// the bytes around it. Inputs are views into the shared array pools; the pools must be unchanged
// after every case (kernels never write their inputs).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "io/compare_outputs.h"
#include "executor/runtime/convolution_epilogue.h"
#include "executor/runtime/fused_chains.h"
#include "executor/runtime/kernel.h"
#include "executor/runtime/op_facts.h"
#include "io/npy.h"
#include "core/scalar_type.h"

namespace nrt::exec {
namespace {

using nlohmann::json;

constexpr const char* kGoldens = "tests/kernels/goldens/";

const json& manifest() {
  static const json parsed = [] {
    std::ifstream in(std::string(kGoldens) + "manifest.json");
    if (!in) return json::object({{"cases", json::array()}});
    return json::parse(in);
  }();
  return parsed;
}

// The flat per-dtype pools, loaded once; `pristine` keeps copies to detect writes into inputs.
struct Pools {
  std::map<std::string, Tensor> tensors;
  std::map<std::string, std::vector<uint8_t>> pristine;
};

Pools& pools() {
  static Pools p = [] {
    Pools loaded;
    for (const char* name : {"f32", "f64", "f16", "bf16", "i8", "i16", "i32", "i64", "u8", "b8"}) {
      auto t = read_npy(std::string(kGoldens) + name + ".npy");
      if (!t) continue;
      Tensor tensor = *t;
      if (std::string(name) == "bf16") tensor = *convert_npy_for(tensor, ScalarType::BFLOAT16, name);
      loaded.pristine[name].assign(tensor.raw_data(), tensor.raw_data() + tensor.nbytes());
      loaded.tensors[name] = tensor;
    }
    return loaded;
  }();
  return p;
}

// "pool:offset:d0,d1" -> a contiguous view into the pool.
Tensor tensor_ref(const std::string& ref) {
  const size_t a = ref.find(':'), b = ref.find(':', a + 1);
  const std::string pool = ref.substr(0, a);
  const int64_t offset = std::stoll(ref.substr(a + 1, b - a - 1));
  std::vector<int64_t> sizes;
  std::stringstream dims(ref.substr(b + 1));
  for (std::string dim; std::getline(dims, dim, ',');) sizes.push_back(std::stoll(dim));
  const Tensor& base = pools().tensors.at(pool);
  return base.as_strided(sizes, Tensor::contiguous_strides(sizes), offset);
}

// Applies the case's view transforms (the same ones NumPy applied).
Tensor apply_view(Tensor t, const json& transforms) {
  for (const auto& transform : transforms) {
    if (transform.contains("permute")) {
      std::vector<int64_t> sizes, strides;
      for (int64_t d : transform["permute"].get<std::vector<int64_t>>()) {
        sizes.push_back(t.sizes()[static_cast<size_t>(d)]);
        strides.push_back(t.strides()[static_cast<size_t>(d)]);
      }
      t = t.as_strided(sizes, strides, t.storage_offset());
    } else if (transform.contains("expand")) {
      const auto sizes = transform["expand"].get<std::vector<int64_t>>();
      std::vector<int64_t> strides(sizes.size(), 0);
      const size_t lead = sizes.size() - t.sizes().size();
      for (size_t i = 0; i < t.sizes().size(); ++i) {
        strides[lead + i] = t.sizes()[i] == sizes[lead + i] ? t.strides()[i] : 0;
      }
      t = t.as_strided(sizes, strides, t.storage_offset());
    } else if (transform.contains("slice")) {
      const auto s = transform["slice"].get<std::vector<int64_t>>();  // dim, start, stop, step
      const auto dim = static_cast<size_t>(s[0]);
      std::vector<int64_t> sizes = t.sizes(), strides = t.strides();
      sizes[dim] = (s[2] - s[1] + s[3] - 1) / s[3];
      const int64_t offset = t.storage_offset() + s[1] * strides[dim];
      strides[dim] *= s[3];
      t = t.as_strided(sizes, strides, offset);
    }
  }
  return t;
}

Tensor tensor_entry(const json& entry) {
  Tensor t = tensor_ref(entry["tensor"].get<std::string>());
  if (entry.contains("view")) t = apply_view(t, entry["view"]);
  return t;
}

RuntimeValue argument_value(const json& arg) {
  if (arg.contains("tensor")) return tensor_entry(arg);
  if (arg.contains("tensors")) {
    std::vector<Tensor> list;
    for (const auto& item : arg["tensors"]) list.push_back(tensor_entry(item));
    return list;
  }
  if (arg.contains("optional_tensors")) {
    std::vector<std::optional<Tensor>> list;
    for (const auto& item : arg["optional_tensors"]) {
      list.push_back(item.is_null() ? std::optional<Tensor>() : std::optional<Tensor>(tensor_entry(item)));
    }
    return list;
  }
  if (arg.contains("int")) return arg["int"].get<int64_t>();
  if (arg.contains("float")) {
    if (arg["float"].is_string()) return std::stod(arg["float"].get<std::string>());  // "inf", "-inf", "nan"
    return arg["float"].get<double>();
  }
  if (arg.contains("bool")) return arg["bool"].get<bool>();
  if (arg.contains("ints")) return arg["ints"].get<std::vector<int64_t>>();
  if (arg.contains("floats")) return arg["floats"].get<std::vector<double>>();
  if (arg.contains("str")) return arg["str"].get<std::string>();
  if (arg.contains("dtype")) return *nrt::scalar_type_from_short_name(arg["dtype"].get<std::string>());
  return std::monostate{};
}

Tolerance default_tolerance(ScalarType dtype) {
  switch (dtype) {
    case ScalarType::FLOAT32: return {1e-6, 1e-5};
    case ScalarType::FLOAT64: return {1e-12, 1e-12};
    case ScalarType::FLOAT16: return {1e-3, 2e-3};
    case ScalarType::BFLOAT16: return {1e-2, 1.6e-2};
    default: return {0.0, 0.0};
  }
}

enum class Mode { kAllocate, kPreallocated };

struct GoldenParam {
  size_t index;
  Mode mode;
};

const json& case_of(const GoldenParam& p) { return manifest()["cases"][p.index]; }

// Preallocation applies to non-view kernels whose outputs are all tensors.
bool preallocatable(const json& c) {
  if (c.contains("error")) return false;
  const KernelInfo* info = KernelRegistry::global().find(c["target"].get<std::string>(), DeviceKind::kCpu);
  if (info == nullptr || info->is_view || c["outputs"].empty()) return false;
  for (const auto& o : c["outputs"]) {
    if (!o.contains("tensor")) return false;
  }
  return true;
}

std::vector<GoldenParam> golden_params() {
  std::vector<GoldenParam> params;
  for (size_t i = 0; i < manifest()["cases"].size(); ++i) {
    params.push_back({i, Mode::kAllocate});
    if (preallocatable(manifest()["cases"][i])) params.push_back({i, Mode::kPreallocated});
  }
  return params;
}

// A tensor of `like`'s dtype and sizes at element offset kGuard inside a storage poisoned with 0xff.
constexpr int64_t kGuard = 3;
Tensor poisoned_output(const Tensor& like) {
  const int64_t elements = like.numel() + 2 * kGuard;
  auto storage = Storage::allocate(static_cast<size_t>(elements) * like.element_size());
  std::memset(storage->data(), 0xff, storage->bytes());
  return Tensor(storage, like.dtype(), like.sizes(), Tensor::contiguous_strides(like.sizes()), kGuard);
}

bool guards_intact(const Tensor& t) {
  const size_t element = t.element_size();
  const uint8_t* data = t.storage()->data();
  const size_t tail = static_cast<size_t>(kGuard + t.numel()) * element;
  for (size_t i = 0; i < static_cast<size_t>(kGuard) * element; ++i) {
    if (data[i] != 0xff || data[tail + i] != 0xff) return false;
  }
  return true;
}

void expect_tensor(const Tensor& got, const Tensor& expected, const json& c, const std::string& what) {
  Tolerance tol = default_tolerance(expected.dtype());
  if (c.contains("rtol")) tol.rtol = c["rtol"].get<double>();
  if (c.contains("atol")) tol.atol = c["atol"].get<double>();
  ASSERT_TRUE(got.defined()) << what << " is undefined";
  EXPECT_EQ(nrt::short_name(got.dtype()), nrt::short_name(expected.dtype())) << what;
  const Comparison cmp = compare_tensors(got, expected, tol);
  EXPECT_TRUE(cmp.ok) << what << ": got " << got.type_string() << ", expected " << expected.type_string() << " "
                      << cmp.problem << " mismatched " << cmp.num_mismatched << "/" << cmp.num_elements
                      << ", worst at " << index_text(cmp.worst_index) << ": got " << cmp.worst_got << " expected "
                      << cmp.worst_expected;
}

void expect_output(const RuntimeValue& got, const json& expected, const json& c, const std::string& what) {
  if (expected.contains("tensor")) {
    const auto* t = std::get_if<Tensor>(&got);
    ASSERT_NE(t, nullptr) << what << " is not a tensor";
    expect_tensor(*t, tensor_entry(expected), c, what);
  } else if (expected.contains("tensors")) {
    const auto* list = std::get_if<std::vector<Tensor>>(&got);
    ASSERT_NE(list, nullptr) << what << " is not a tensor list";
    ASSERT_EQ(list->size(), expected["tensors"].size()) << what;
    for (size_t i = 0; i < list->size(); ++i) {
      expect_tensor((*list)[i], tensor_entry(expected["tensors"][i]), c, what + "[" + std::to_string(i) + "]");
    }
  } else if (expected.contains("int")) {
    const auto* v = std::get_if<int64_t>(&got);
    ASSERT_NE(v, nullptr) << what << " is not an int";
    EXPECT_EQ(*v, expected["int"].get<int64_t>()) << what;
  } else if (expected.contains("float")) {
    const auto* v = std::get_if<double>(&got);
    ASSERT_NE(v, nullptr) << what << " is not a float";
    EXPECT_DOUBLE_EQ(*v, expected["float"].get<double>()) << what;
  } else if (expected.contains("bool")) {
    const auto* v = std::get_if<bool>(&got);
    ASSERT_NE(v, nullptr) << what << " is not a bool";
    EXPECT_EQ(*v, expected["bool"].get<bool>()) << what;
  } else {
    FAIL() << what << ": unknown expected output kind";
  }
}

class GoldenTest : public ::testing::TestWithParam<GoldenParam> {};

TEST_P(GoldenTest, MatchesNumPy) {
  const json& c = case_of(GetParam());
  const std::string target = c["target"].get<std::string>();
  const KernelInfo* info = KernelRegistry::global().find(target, DeviceKind::kCpu);
  ASSERT_NE(info, nullptr) << "no CPU kernel for " << target;

  // Arguments: values owned here, named as the manifest names them.
  std::vector<std::string> names;
  std::vector<RuntimeValue> values;
  for (const auto& arg : c["args"]) {
    names.push_back(arg["name"].get<std::string>());
    values.push_back(argument_value(arg));
  }
  std::vector<NamedValue> inputs;
  for (size_t i = 0; i < values.size(); ++i) inputs.push_back({names[i], &values[i]});

  const size_t num_outputs = c.contains("outputs") ? c["outputs"].size() : 1;
  std::vector<RuntimeValue> outputs(std::max<size_t>(num_outputs, 1));
  std::vector<Tensor> placed;
  if (GetParam().mode == Mode::kPreallocated) {
    for (size_t i = 0; i < num_outputs; ++i) {
      placed.push_back(poisoned_output(tensor_entry(c["outputs"][i])));
      outputs[i] = placed.back();
    }
  }
  KernelContext ctx(target, inputs, std::span<RuntimeValue>(outputs.data(), num_outputs), Device{});
  const Status status = info->fn(ctx);

  if (c.contains("error")) {
    ASSERT_FALSE(status.ok()) << target << " accepted an invalid call";
    EXPECT_EQ(status.error().code, ErrorCode::KernelError);
    EXPECT_EQ(status.error().message.rfind(target + ": ", 0), 0u) << "the message does not name the target: "
                                                                  << status.error().message;
    EXPECT_NE(status.error().message.find(c["error"].get<std::string>()), std::string::npos)
        << "message: " << status.error().message;
  } else {
    ASSERT_TRUE(status.ok()) << status.error().to_string();
    for (size_t i = 0; i < c["outputs"].size(); ++i) {
      expect_output(outputs[i], c["outputs"][i], c, "output " + std::to_string(i));
      if (GetParam().mode == Mode::kPreallocated) {
        const auto* t = std::get_if<Tensor>(&outputs[i]);
        ASSERT_NE(t, nullptr);
        EXPECT_EQ(t->storage(), placed[i].storage()) << "output " << i << " was not written in place";
        EXPECT_EQ(t->storage_offset(), kGuard) << "output " << i;
        EXPECT_TRUE(guards_intact(placed[i])) << "output " << i << ": bytes around the output were written";
      }
    }
  }
  for (const auto& [name, tensor] : pools().tensors) {
    EXPECT_EQ(std::memcmp(tensor.raw_data(), pools().pristine[name].data(), tensor.nbytes()), 0)
        << "the kernel wrote into its inputs (pool " << name << ")";
  }
}

std::string param_name(const ::testing::TestParamInfo<GoldenParam>& info) {
  return case_of(info.param).at("name").get<std::string>() + (info.param.mode == Mode::kPreallocated ? "_placed" : "");
}

INSTANTIATE_TEST_SUITE_P(Goldens, GoldenTest, ::testing::ValuesIn(golden_params()), param_name);

TEST(GoldenManifest, IsPresentAndComplete) {
  ASSERT_GT(manifest()["cases"].size(), 100u) << "goldens missing: run tests/kernels/make_goldens.py";
  EXPECT_EQ(pools().tensors.size(), 10u);
}

// Every registered CPU target is exercised by some golden case, except those whose results are
// unspecified (empty) or that only check, which kernel_behavior_test covers.
TEST(GoldenManifest, CoversEveryRegisteredTarget) {
  const std::set<std::string> behavior_only = {
      "aten::empty.memory_format", "aten::empty_strided.default", "aten::empty_like.default", "aten::empty_permuted.default",
      "aten::new_empty.default", "aten::sym_storage_offset.default", "aten::sym_constrain_range.default",
      "aten::sym_constrain_range_for_size.default", "aten::_assert_tensor_metadata.default",
  };
  std::set<std::string> covered;
  for (const auto& c : manifest()["cases"]) covered.insert(c["target"].get<std::string>());
  std::vector<std::string> missing;
  // Kernels that run subgraphs, talk to other ranks or draw random numbers have suites of their
  // own: tests/executor/control_flow_test, collective_kernels_test and the mpirun tests; the
  // random draws tests/executor/seeded_random_test, tests/random/philox_test and the torch
  // corpus's philox programs (torch's bits, exactly). A fused convolution node's kernel, and a
  // fused chain's (RMSNorm, rotary embedding, SiLU times up, the absorbed nodes), run what the plan
  // fused (tests/executor/convolution_fusion_test, rms_norm_fusion_test, rotary_fusion_test and
  // silu_mul_fusion_test, against the nodes run apart).
  auto tested_elsewhere = [](const std::string& target) {
    const OpFacts* facts = op_facts(target);
    return target == convolution_epilogue::kKernelTarget || target == fused_chains::kRmsNormTarget ||
           target == fused_chains::kRotaryTarget || target == fused_chains::kSiluMulTarget ||
           target == fused_chains::kAbsorbedTarget || target.rfind("higher_order::", 0) == 0 || target.rfind("_c10d_functional::", 0) == 0 ||
           target.rfind("aten::_philox_", 0) == 0 || (facts != nullptr && facts->seeded_draw);
  };
  for (const auto& target : KernelRegistry::global().targets(DeviceKind::kCpu)) {
    if (!covered.count(target) && !behavior_only.count(target) && !tested_elsewhere(target)) missing.push_back(target);
  }
  std::string list;
  for (const auto& m : missing) list += " " + m;
  EXPECT_TRUE(missing.empty()) << "targets without a golden case:" << list;
}

}  // namespace
}  // namespace nrt::exec
