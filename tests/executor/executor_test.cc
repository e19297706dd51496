// The executor end to end on small programs built in the test, with the test kernels of
// test_kernels.h: values, weights bound zero-copy, input checks, symbolic shapes, views and
// lifetimes, list arguments and outputs, kernel result checks, memory reuse across runs, poison
// mode, process group binding.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>

#include "executor/runtime/executor.h"
#include "executor/runtime/memory_planner.h"
#include "executor/runtime/tensor_copy.h"
#include "testdata/program_builder.h"
#include "serializer/open_program.h"
#include "tests/executor/tensor_literals.h"
#include "tests/executor/test_kernels.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::ExecutorOptions;
using exec::NamedInputs;
using exec::RuntimeValue;
using exec::Tensor;
using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

std::unique_ptr<Executor> load(ProgramWithWeights program, ExecutorOptions options = {}) {
  link_test_kernels();
  auto file = verify_in_memory(std::move(program));
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  if (!file) return nullptr;
  auto executor = Executor::load(std::move(*file), std::move(options));
  EXPECT_TRUE(executor.ok()) << (executor.ok() ? "" : executor.error().to_string());
  return executor.ok() ? std::move(*executor) : nullptr;
}

std::string load_error(ProgramWithWeights program, ExecutorOptions options = {}) {
  link_test_kernels();
  auto file = verify_in_memory(std::move(program));
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().to_string());
  if (!file) return "";
  auto executor = Executor::load(std::move(*file), std::move(options));
  EXPECT_FALSE(executor.ok());
  return executor.ok() ? "" : executor.error().to_string();
}

// out = 2 * (x + w) + x, with w a parameter [4].
ProgramWithWeights chain_program() {
  ProgramBuilder p("executor_test: chain");
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t scale = p.op("nrt_test::scale", "");
  const uint32_t w_storage = p.storage(testdata::pattern_f32(4, 1.0f));
  p.weight("w", w_storage, testdata::tensor_meta(ScalarType::FLOAT32, {4}), true);
  auto g = p.graph("main", true);
  const uint32_t w = g.tensor("p_w", ScalarType::FLOAT32, {4});
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {4});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {4});
  const uint32_t c = g.tensor("c", ScalarType::FLOAT32, {4});
  g.input(arg::tensor(w), fb::InputKind::PARAMETER, "w");
  g.user_input(arg::tensor(x));
  g.node("a", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(a)});
  g.node("b", scale, Args{{"self", arg::tensor(a)}}, Args{{"factor", arg::real(2.0)}}, {arg::tensor(b)});
  g.node("c", add, Args{{"self", arg::tensor(b)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(c)});
  g.user_output(arg::tensor(c));
  return p.finish();
}

std::vector<float> weight_pattern() {
  auto bytes = testdata::pattern_f32(4, 1.0f);
  std::vector<float> w(4);
  std::memcpy(w.data(), bytes.data(), 16);
  return w;
}

TEST(ExecutorTest, DevicesThisBuildLacksAreNotSupported) {
  ExecutorOptions options;
  options.device = exec::Device{exec::DeviceKind::kCuda, 0};
  const std::string error = load_error(chain_program(), options);
  EXPECT_NE(error.find("NRT-E1010 NotSupported"), std::string::npos) << error;
  EXPECT_NE(error.find("cuda:0"), std::string::npos) << error;
}

TEST(ExecutorTest, AnErrorWithCodeOkNeverReadsAsSuccess) {
  Result<int> result = Error{ErrorCode::Ok, "oops"};
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code, ErrorCode::Internal);
  EXPECT_NE(result.error().message.find("oops"), std::string::npos);
}

TEST(ExecutorTest, RunsAChainWithAWeight) {
  auto executor = load(chain_program());
  ASSERT_NE(executor, nullptr);
  const std::vector<float> x = {1, 2, 3, 4};
  auto outputs = executor->run(NamedInputs{{"x", f32({4}, x)}});
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].name, "c");
  const auto w = weight_pattern();
  const auto got = f32_values((*outputs)[0].value);
  ASSERT_EQ(got.size(), 4u);
  for (size_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], 2 * (x[i] + w[i]) + x[i]) << i;
}

TEST(ExecutorTest, WeightsAreZeroCopyViewsOfTheFile) {
  auto executor = load(chain_program());
  ASSERT_NE(executor, nullptr);
  const auto& plan = executor->plan();
  const auto& info = plan.values[0];  // p_w
  ASSERT_EQ(info.name, "p_w");
  const auto* t = std::get_if<Tensor>(&executor->frame().slots()[static_cast<size_t>(info.slot)]);
  ASSERT_NE(t, nullptr);
  ASSERT_TRUE(t->defined());
  // The executor keeps the file; its weight bytes live in the file's buffer, not a copy.
  const auto w = weight_pattern();
  EXPECT_EQ(std::memcmp(t->raw_data(), w.data(), 16), 0);
  auto file = verify_in_memory(chain_program());
  ASSERT_TRUE(file.ok());
  auto shared = std::make_shared<const ProgramFile>(std::move(*file));
  auto second = Executor::load(shared);
  ASSERT_TRUE(second.ok());
  const auto& slot = (*second)->frame().slots()[static_cast<size_t>((*second)->plan().values[0].slot)];
  const auto* weight = std::get_if<Tensor>(&slot);
  ASSERT_NE(weight, nullptr);
  const auto bytes = shared->file_bytes();
  EXPECT_GE(weight->raw_data(), bytes.data());
  EXPECT_LT(weight->raw_data(), bytes.data() + bytes.size());
}

TEST(ExecutorTest, SecondRunReusesTheArenaAndOutputsAreCopies) {
  auto executor = load(chain_program());
  ASSERT_NE(executor, nullptr);
  const uint64_t allocations = executor->frame().arena_allocations();
  EXPECT_EQ(allocations, 1u);
  auto first = executor->run(NamedInputs{{"x", f32({4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(first.ok());
  auto second = executor->run(NamedInputs{{"x", f32({4}, {0, 0, 0, 0})}});
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(executor->frame().arena_allocations(), allocations);
  // The first run's output is the caller's: the second run did not overwrite it.
  const auto w = weight_pattern();
  const auto got = f32_values((*first)[0].value);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_FLOAT_EQ(got[0], 2 * (1 + w[0]) + 1);
  EXPECT_FALSE(executor->frame().in_arena(std::get<Tensor>((*first)[0].value).raw_data()));
}

TEST(ExecutorTest, OutputsViewTheFrameWhenNotCopied) {
  ExecutorOptions options;
  options.copy_outputs = false;
  auto executor = load(chain_program(), options);
  ASSERT_NE(executor, nullptr);
  auto out = executor->run(NamedInputs{{"x", f32({4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(executor->frame().in_arena(std::get<Tensor>((*out)[0].value).raw_data()));
}

TEST(ExecutorTest, ChecksUserInputs) {
  auto executor = load(chain_program());
  ASSERT_NE(executor, nullptr);
  auto missing = executor->run(NamedInputs{});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, ErrorCode::InputMismatch);
  EXPECT_NE(missing.error().message.find("missing input 'x'"), std::string::npos) << missing.error().message;

  auto unknown = executor->run(NamedInputs{{"x", f32({4}, {1, 2, 3, 4})}, {"y", f32({1}, {1})}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.error().message.find("'y'"), std::string::npos) << unknown.error().message;

  auto shape = executor->run(NamedInputs{{"x", f32({2, 2}, {1, 2, 3, 4})}});
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.error().message.find("f32[2,2]"), std::string::npos) << shape.error().message;

  auto dtype = executor->run(NamedInputs{{"x", Tensor::empty(ScalarType::FLOAT64, {4})}});
  ASSERT_FALSE(dtype.ok());
  EXPECT_NE(dtype.error().message.find("f64[4]"), std::string::npos) << dtype.error().message;

  auto not_tensor = executor->run(NamedInputs{{"x", RuntimeValue{int64_t{3}}}});
  EXPECT_FALSE(not_tensor.ok());
  // A failed run leaves the executor usable.
  EXPECT_TRUE(executor->run(NamedInputs{{"x", f32({4}, {1, 2, 3, 4})}}).ok());
}

TEST(ExecutorTest, MissingParameterDataNamesEveryFqn) {
  ProgramBuilder p("executor_test: missing weights");
  const uint32_t add = p.op("nrt_test::add", "");
  auto g = p.graph("main", true);
  const uint32_t w = g.tensor("p_w", ScalarType::FLOAT32, {4});
  const uint32_t v = g.tensor("b_v", ScalarType::FLOAT32, {4});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {4});
  g.input(arg::tensor(w), fb::InputKind::PARAMETER, "layer.weight");
  g.input(arg::tensor(v), fb::InputKind::BUFFER, "layer.running_mean");
  g.node("out", add, Args{{"self", arg::tensor(w)}, {"other", arg::tensor(v)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  const std::string message = load_error(p.finish());
  EXPECT_NE(message.find("layer.weight"), std::string::npos) << message;
  EXPECT_NE(message.find("layer.running_mean"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("NRT-E1005 WeightMismatch", 0), 0u) << message;
}

TEST(ExecutorTest, WeightDisagreeingWithItsValueIsAnError) {
  ProgramBuilder p("executor_test: weight shape");
  const uint32_t add = p.op("nrt_test::add", "");
  p.weight("w", p.storage(testdata::pattern_f32(6, 1.0f)), testdata::tensor_meta(ScalarType::FLOAT32, {6}), true);
  auto g = p.graph("main", true);
  const uint32_t w = g.tensor("p_w", ScalarType::FLOAT32, {4});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {4});
  g.input(arg::tensor(w), fb::InputKind::PARAMETER, "w");
  g.node("out", add, Args{{"self", arg::tensor(w)}, {"other", arg::tensor(w)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  const std::string message = load_error(p.finish());
  EXPECT_NE(message.find("weight 'w' is f32[6]"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("NRT-E1005 WeightMismatch", 0), 0u) << message;
}

// x: [s0, 2], y: [s0, 2] -> x + y; s0 bound by the inputs, checked for agreement.
ProgramWithWeights symbolic_program() {
  ProgramBuilder p("executor_test: symbolic");
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t size = p.op("nrt_test::size", "");
  p.range_constraint("s0", 1, 64);
  auto g = p.graph("main", true);
  auto meta = [] {
    fb::TensorMetaT m = testdata::tensor_meta(ScalarType::FLOAT32, {0, 2});
    m.sizes[0] = testdata::symbolic_dim("s0", 3);
    m.strides[0] = testdata::literal_dim(2);
    return m;
  };
  const uint32_t x = g.tensor("x", meta());
  const uint32_t y = g.tensor("y", meta());
  const uint32_t sum = g.tensor("sum", meta());
  const uint32_t twice = g.tensor("twice", meta());
  const uint32_t n = g.sym_int("n", "s0", 3);
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(y));
  g.node("sum", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(y)}}, {}, {arg::tensor(sum)});
  g.node("twice", add, Args{{"self", arg::tensor(sum)}, {"other", arg::tensor(sum)}}, {}, {arg::tensor(twice)});
  g.node("n", size, Args{{"self", arg::tensor(twice)}, {"dim", arg::integer(0)}}, {}, {arg::sym_int(static_cast<int32_t>(n))});
  g.user_output(arg::tensor(twice));
  g.user_output(arg::sym_int(static_cast<int32_t>(n)));
  return p.finish();
}

TEST(ExecutorTest, SymbolicSizesBindPerRun) {
  auto executor = load(symbolic_program());
  ASSERT_NE(executor, nullptr);
  for (int64_t rows : {3, 1, 5, 3}) {
    std::vector<float> x(static_cast<size_t>(rows * 2)), y(x.size());
    for (size_t i = 0; i < x.size(); ++i) {
      x[i] = static_cast<float>(i);
      y[i] = 0.5f;
    }
    auto out = executor->run(NamedInputs{{"x", f32({rows, 2}, x)}, {"y", f32({rows, 2}, y)}});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    ASSERT_EQ(out->size(), 2u);
    const auto got = f32_values((*out)[0].value);
    ASSERT_EQ(got.size(), x.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_FLOAT_EQ(got[i], 2 * (x[i] + 0.5f));
    EXPECT_EQ((*out)[1].name, "n");
    EXPECT_EQ(std::get<int64_t>((*out)[1].value), rows);
    // Both intermediates are planned for the bound size.
    EXPECT_EQ(executor->memory_plan().naive_bytes, 2 * exec::kArenaAlignment * ((rows * 8 + 63) / 64));
  }
  auto disagree = executor->run(NamedInputs{{"x", f32({2, 2}, {1, 2, 3, 4})}, {"y", f32({1, 2}, {1, 2})}});
  ASSERT_FALSE(disagree.ok());
  EXPECT_NE(disagree.error().message.find("symbol s0"), std::string::npos) << disagree.error().message;
  std::vector<float> big(65 * 2, 1.0f);
  auto out_of_range = executor->run(NamedInputs{{"x", f32({65, 2}, big)}, {"y", f32({65, 2}, big)}});
  ASSERT_FALSE(out_of_range.ok());
  EXPECT_NE(out_of_range.error().message.find("outside its range"), std::string::npos) << out_of_range.error().message;
}

// a = x + x; v = alias(a); b = x + x; out = v + b. Without extending a's lifetime to v's last
// use, b would take a's bytes and out would be 2 * b instead of a + b.
ProgramWithWeights view_program(float scale_b) {
  ProgramBuilder p("executor_test: views");
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t alias = p.op("nrt_test::alias", "");
  const uint32_t scale = p.op("nrt_test::scale", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {16});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {16});
  const uint32_t v = g.tensor("v", ScalarType::FLOAT32, {16});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {16});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {16});
  g.user_input(arg::tensor(x));
  g.node("a", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(a)});
  g.node("v", alias, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(v)});
  g.node("b", scale, Args{{"self", arg::tensor(x)}, {"factor", arg::real(scale_b)}}, {}, {arg::tensor(b)});
  g.node("out", add, Args{{"self", arg::tensor(v)}, {"other", arg::tensor(b)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  return p.finish();
}

TEST(ExecutorTest, ViewsExtendTheLifetimeOfTheirBase) {
  auto executor = load(view_program(3.0f));
  ASSERT_NE(executor, nullptr);
  const auto& plan = executor->plan();
  const auto& a = plan.values[1];
  const auto& v = plan.values[2];
  ASSERT_EQ(a.name, "a");
  ASSERT_EQ(v.name, "v");
  EXPECT_FALSE(v.planned);
  ASSERT_EQ(v.alias_roots, std::vector<int32_t>{1});
  EXPECT_EQ(a.last_use, 1);      // read by the alias node
  EXPECT_EQ(a.lifetime_end, 3);  // extended to v's last use
  std::vector<float> x(16);
  for (size_t i = 0; i < 16; ++i) x[i] = static_cast<float>(i + 1);
  auto out = executor->run(NamedInputs{{"x", f32({16}, x)}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  const auto got = f32_values((*out)[0].value);
  ASSERT_EQ(got.size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_FLOAT_EQ(got[i], 2 * x[i] + 3 * x[i]) << i;
}

TEST(ExecutorTest, PoisonModeDoesNotDisturbValidPrograms) {
  ExecutorOptions options;
  options.poison_freed = true;
  auto executor = load(chain_program(), options);
  ASSERT_NE(executor, nullptr);
  EXPECT_TRUE(executor->frame().poisoning());
  const auto w = weight_pattern();
  for (int run = 0; run < 2; ++run) {
    auto out = executor->run(NamedInputs{{"x", f32({4}, {1, 2, 3, 4})}});
    ASSERT_TRUE(out.ok());
    const auto got = f32_values((*out)[0].value);
    ASSERT_EQ(got.size(), 4u);
    for (size_t i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(got[i], 2 * (static_cast<float>(i + 1) + w[i]) + static_cast<float>(i + 1));
  }
  auto views = load(view_program(3.0f), options);
  ASSERT_NE(views, nullptr);
  std::vector<float> x(16, 1.0f);
  auto out = views->run(NamedInputs{{"x", f32({16}, x)}});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(f32_values((*out)[0].value).size(), 16u);
  for (float v : f32_values((*out)[0].value)) EXPECT_FLOAT_EQ(v, 5.0f);
}

TEST(ExecutorTest, PoisonModeFollowsTheEnvironmentByDefault) {
  ASSERT_EQ(setenv("NRT_POISON_FREED", "1", 1), 0);
  auto on = load(chain_program());
  ASSERT_EQ(setenv("NRT_POISON_FREED", "0", 1), 0);
  auto off = load(chain_program());
  ASSERT_EQ(unsetenv("NRT_POISON_FREED"), 0);
  ExecutorOptions forced;
  forced.poison_freed = false;
  ASSERT_EQ(setenv("NRT_POISON_FREED", "1", 1), 0);
  auto explicit_off = load(chain_program(), forced);
  ASSERT_EQ(unsetenv("NRT_POISON_FREED"), 0);
  ASSERT_NE(on, nullptr);
  ASSERT_NE(off, nullptr);
  ASSERT_NE(explicit_off, nullptr);
  EXPECT_TRUE(on->frame().poisoning());
  EXPECT_FALSE(off->frame().poisoning());
  EXPECT_FALSE(explicit_off->frame().poisoning());
}

// A malformed NRT_POISON_FREED (empty included) is an error naming it, never a silent default.
TEST(ExecutorTest, PoisonSwitchIsReadAsEverySwitchIs) {
  for (const char* bad : {"", "yes", "2", " 1"}) {
    ASSERT_EQ(setenv("NRT_POISON_FREED", bad, 1), 0);
    auto file = verify_in_memory(chain_program());
    ASSERT_TRUE(file.ok());
    auto loaded = Executor::load(std::move(*file));
    ASSERT_FALSE(loaded.ok()) << "'" << bad << "' accepted";
    EXPECT_EQ(loaded.error().code, ErrorCode::InvalidArgument);
    EXPECT_NE(loaded.error().message.find("NRT_POISON_FREED"), std::string::npos) << loaded.error().message;
  }
  ASSERT_EQ(unsetenv("NRT_POISON_FREED"), 0);
}

// a = x + x; s = stash(a) (a copy of a; the kernel also remembers a itself); out =
// read_stash(x) = x + a, reading a after its lifetime ended at node `s`.
ProgramWithWeights read_after_lifetime_program() {
  ProgramBuilder p("executor_test: read after lifetime");
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t stash = p.op("nrt_test::stash", "");
  const uint32_t read = p.op("nrt_test::read_stash", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {8});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {8});
  const uint32_t s = g.tensor("s", ScalarType::FLOAT32, {8});
  const uint32_t out = g.tensor("out", ScalarType::FLOAT32, {8});
  g.user_input(arg::tensor(x));
  g.node("a", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(a)});
  g.node("s", stash, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(s)});
  g.node("out", read, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  g.user_output(arg::tensor(s));
  return p.finish();
}

TEST(ExecutorTest, PoisonModeExposesAReadAfterLifetime) {
  const std::vector<float> x = {1, 2, 3, 4, 5, 6, 7, 8};
  {
    ExecutorOptions options;
    options.poison_freed = true;
    auto executor = load(read_after_lifetime_program(), options);
    ASSERT_NE(executor, nullptr);
    auto out = executor->run(NamedInputs{{"x", f32({8}, x)}});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    ASSERT_EQ(f32_values((*out)[0].value).size(), 8u);
    for (float v : f32_values((*out)[0].value)) EXPECT_TRUE(std::isnan(v)) << v;
    // The stashed copy was taken inside the lifetime and is intact.
    const auto s = f32_values((*out)[1].value);
    ASSERT_EQ(s.size(), 8u);
    for (size_t i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(s[i], 2 * x[i]);
  }
  {
    ExecutorOptions options;
    options.poison_freed = false;
    auto executor = load(read_after_lifetime_program(), options);
    ASSERT_NE(executor, nullptr);
    auto out = executor->run(NamedInputs{{"x", f32({8}, x)}});
    ASSERT_TRUE(out.ok());
    // Without poison the stale read goes unnoticed: the values are plausible numbers.
    ASSERT_EQ(f32_values((*out)[0].value).size(), 8u);
    for (float v : f32_values((*out)[0].value)) EXPECT_FALSE(std::isnan(v));
  }
}

TEST(ExecutorTest, ListArgumentsAndListOutputs) {
  ProgramBuilder p("executor_test: lists");
  const uint32_t halves = p.op("nrt_test::halves", "");
  const uint32_t sum_list = p.op("nrt_test::sum_list", "");
  const uint32_t size = p.op("nrt_test::size", "");
  const uint32_t sum_ints = p.op("nrt_test::sum_ints", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4, 2});
  const uint32_t h0 = g.tensor("h0", ScalarType::FLOAT32, {2, 2});
  const uint32_t h1 = g.tensor("h1", ScalarType::FLOAT32, {2, 2});
  const uint32_t total = g.tensor("total", ScalarType::FLOAT32, {2, 2});
  const uint32_t n = g.sym_int("n", "u0", 4);
  const uint32_t m = g.sym_int("m", "u1", 9);
  g.user_input(arg::tensor(x));
  g.node("halves", halves, Args{{"self", arg::tensor(x)}}, {}, {arg::tensors({h0, h1})});
  g.node("total", sum_list, Args{{"tensors", arg::tensors({h0, h1, h0})}}, {}, {arg::tensor(total)});
  g.node("n", size, Args{{"self", arg::tensor(x)}, {"dim", arg::integer(0)}}, {}, {arg::sym_int(static_cast<int32_t>(n))});
  g.node("m", sum_ints, Args{{"values", arg::sym_ints({fb::SymIntItem(static_cast<int32_t>(n), 0), fb::SymIntItem(-1, 5)})}},
         {}, {arg::sym_int(static_cast<int32_t>(m))});
  g.user_output(arg::tensor(total));
  g.user_output(arg::sym_int(static_cast<int32_t>(m)));
  auto executor = load(p.finish());
  ASSERT_NE(executor, nullptr);
  auto out = executor->run(NamedInputs{{"x", f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8})}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(f32_values((*out)[0].value), (std::vector<float>{1 + 5 + 1, 2 + 6 + 2, 3 + 7 + 3, 4 + 8 + 4}));
  EXPECT_EQ(std::get<int64_t>((*out)[1].value), 4 + 5);
}

ProgramWithWeights one_node_program(const std::string& target) {
  ProgramBuilder p("executor_test: " + target);
  const uint32_t add = p.op("nrt_test::add", "");
  const uint32_t op = p.op(target, "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {4});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {4});
  const uint32_t c = g.tensor("c", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  g.node("a", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(a)});
  g.node("b", op, Args{{"self", arg::tensor(a)}}, {}, {arg::tensor(b)});
  g.node("c", add, Args{{"self", arg::tensor(b)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(c)});
  g.user_output(arg::tensor(c));
  return p.finish();
}

std::string run_error(const std::string& target) {
  auto executor = load(one_node_program(target));
  if (!executor) return "load failed";
  auto out = executor->run(NamedInputs{{"x", f32({4}, {1, 2, 3, 4})}});
  EXPECT_FALSE(out.ok());
  return out.ok() ? "" : out.error().to_string();
}

TEST(ExecutorTest, KernelErrorsNameTheNode) {
  const std::string message = run_error("nrt_test::fail");
  EXPECT_NE(message.find("node 1 'b' (nrt_test::fail)"), std::string::npos) << message;
  EXPECT_NE(message.find("failed on purpose"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("NRT-E1003 KernelError", 0), 0u) << message;
}

TEST(ExecutorTest, ResultsAreCheckedAgainstTheGraph) {
  const std::string message = run_error("nrt_test::wrong_shape");
  EXPECT_NE(message.find("produced f32[5]"), std::string::npos) << message;
  EXPECT_NE(message.find("f32[4]"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("NRT-E1004 KernelResultMismatch", 0), 0u) << message;
}

TEST(ExecutorTest, UndeclaredAliasOfPlannedMemoryIsAnError) {
  const std::string message = run_error("nrt_test::bad_alias");
  EXPECT_NE(message.find("is_view"), std::string::npos) << message;
  EXPECT_EQ(message.rfind("NRT-E1004 KernelResultMismatch", 0), 0u) << message;
}

TEST(ExecutorTest, ProcessGroupsAreBoundByName) {
  ProgramBuilder p("executor_test: groups");
  const uint32_t op = p.op("nrt_test::group_size", "");
  const uint32_t solo = p.group("solo", {0}, "gloo");
  const uint32_t pair = p.group("pair", {0, 1}, "nccl");
  auto g = p.graph("main", true);
  const uint32_t a = g.sym_int("a", "u0", 1);
  const uint32_t b = g.sym_int("b", "u1", 2);
  g.node("a", op, Args{{"group", arg::process_group(solo)}}, {}, {arg::sym_int(static_cast<int32_t>(a))});
  g.node("b", op, Args{{"group", arg::process_group(pair)}}, {}, {arg::sym_int(static_cast<int32_t>(b))});
  g.user_output(arg::sym_int(static_cast<int32_t>(a)));
  g.user_output(arg::sym_int(static_cast<int32_t>(b)));
  auto executor = load(p.finish());
  ASSERT_NE(executor, nullptr);
  auto out = executor->run(NamedInputs{});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(std::get<int64_t>((*out)[0].value), 1);   // bound to the single-process group
  EXPECT_EQ(std::get<int64_t>((*out)[1].value), -1);  // two ranks: unbound without a launcher
}

TEST(ExecutorTest, PlannedTensorsKeepDenseRecordedStrides) {
  ProgramBuilder p("executor_test: strides");
  const uint32_t add = p.op("nrt_test::add", "");
  auto g = p.graph("main", true);
  auto strided = [](std::vector<int64_t> strides) {
    fb::TensorMetaT meta = testdata::tensor_meta(ScalarType::FLOAT32, {2, 3});
    for (size_t d = 0; d < strides.size(); ++d) meta.strides[d] = testdata::literal_dim(strides[d]);
    return meta;
  };
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {2, 3});
  const uint32_t transposed = g.tensor("transposed", strided({1, 2}));  // dense, column-major
  const uint32_t gappy = g.tensor("gappy", strided({4, 1}));            // not dense: contiguous instead
  g.user_input(arg::tensor(x));
  g.node("transposed", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(transposed)});
  g.node("gappy", add, Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(gappy)});
  g.user_output(arg::tensor(transposed));
  g.user_output(arg::tensor(gappy));
  auto executor = load(p.finish());
  ASSERT_NE(executor, nullptr);
  const Tensor* t = executor->frame().planned_tensor(transposed);
  const Tensor* u = executor->frame().planned_tensor(gappy);
  ASSERT_NE(t, nullptr);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(t->strides(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(u->strides(), (std::vector<int64_t>{3, 1}));
}

TEST(ExecutorTest, LongChainPlansFarBelowTheNaiveSum) {
  ProgramBuilder p("executor_test: long chain");
  const uint32_t add = p.op("nrt_test::add", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {64});
  g.user_input(arg::tensor(x));
  uint32_t prev = x;
  for (int i = 0; i < 100; ++i) {
    const uint32_t next = g.tensor("v" + std::to_string(i), ScalarType::FLOAT32, {64});
    g.node("v" + std::to_string(i), add, Args{{"self", arg::tensor(prev)}, {"other", arg::tensor(x)}}, {},
           {arg::tensor(next)});
    prev = next;
  }
  g.user_output(arg::tensor(prev));
  auto executor = load(p.finish());
  ASSERT_NE(executor, nullptr);
  const auto& memory = executor->memory_plan();
  EXPECT_EQ(memory.naive_bytes, 100u * 256u);
  EXPECT_EQ(memory.arena_bytes, 2u * 256u);  // ping-pong
  std::vector<float> ones(64, 1.0f);
  auto out = executor->run(NamedInputs{{"x", f32({64}, ones)}});
  ASSERT_TRUE(out.ok());
  ASSERT_EQ(f32_values((*out)[0].value).size(), 64u);
  for (float v : f32_values((*out)[0].value)) EXPECT_FLOAT_EQ(v, 101.0f);
}

// The compact run path trusts a slot it verified on an earlier run; a node whose results were
// refused must not leave it trusting what the kernel left behind.
TEST(ExecutorTest, RecoversFromRefusedResultsOfAMultiOutputNode) {
  ProgramBuilder p("executor_test: pair");
  const uint32_t pair = p.op("nrt_test::pair_or_wrong", "");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {4});
  const uint32_t a = g.tensor("a", ScalarType::FLOAT32, {4});
  const uint32_t b = g.tensor("b", ScalarType::FLOAT32, {4});
  g.user_input(arg::tensor(x));
  g.node("pair", pair, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(a), arg::tensor(b)});
  g.user_output(arg::tensor(a));
  g.user_output(arg::tensor(b));
  auto executor = load(p.finish());
  ASSERT_NE(executor, nullptr);
  for (int round = 0; round < 2; ++round) {
    auto good = executor->run(NamedInputs{{"x", f32({4}, {1, 2, 3, 4})}});
    ASSERT_TRUE(good.ok()) << good.error().to_string();
    EXPECT_EQ(f32_values((*good)[0].value), (std::vector<float>{1, 2, 3, 4}));
    EXPECT_EQ(f32_values((*good)[1].value), (std::vector<float>{1, 2, 3, 4}));
    auto bad = executor->run(NamedInputs{{"x", f32({4}, {-1, 2, 3, 4})}});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().code, ErrorCode::KernelResultMismatch) << bad.error().to_string();
  }
  auto again = executor->run(NamedInputs{{"x", f32({4}, {5, 6, 7, 8})}});
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(f32_values((*again)[1].value), (std::vector<float>{5, 6, 7, 8}));
}

// A re-plan that fails (sizes beyond addressable memory) must not leave the frame believing the
// previous plan still holds: running again with the earlier sizes works.
TEST(ExecutorTest, AFailedReplanLeavesTheFrameUsable) {
  ProgramBuilder p("executor_test: replan");
  const uint32_t zeros4 = p.op("nrt_test::zeros4", "");
  auto g = p.graph("main", true);
  fb::TensorMetaT x_meta = testdata::tensor_meta(ScalarType::FLOAT32, {0});
  x_meta.sizes[0] = testdata::symbolic_dim("s0", 2);
  fb::TensorMetaT y_meta = testdata::tensor_meta(ScalarType::FLOAT32, {0, 0, 0, 0});
  for (auto& size : y_meta.sizes) size = testdata::symbolic_dim("s0", 2);
  y_meta.strides[0] = testdata::symbolic_dim("s0*s0*s0", 8);
  y_meta.strides[1] = testdata::symbolic_dim("s0*s0", 4);
  y_meta.strides[2] = testdata::symbolic_dim("s0", 2);
  const uint32_t x = g.tensor("x", std::move(x_meta));
  const uint32_t y = g.tensor("y", std::move(y_meta));
  g.user_input(arg::tensor(x));
  g.node("y", zeros4, Args{{"self", arg::tensor(x)}}, {}, {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  auto executor = load(p.finish());
  ASSERT_NE(executor, nullptr);
  auto run_with = [&](int64_t n) { return executor->run(NamedInputs{{"x", Tensor::empty(ScalarType::FLOAT32, {n})}}); };
  auto first = run_with(2);
  ASSERT_TRUE(first.ok()) << first.error().to_string();
  auto huge = run_with(65536);  // 4 * 65536^4 bytes
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::InvalidShape) << huge.error().to_string();
  auto again = run_with(2);
  ASSERT_TRUE(again.ok()) << again.error().to_string();
  EXPECT_EQ(std::get<Tensor>((*again)[0].value).sizes(), (std::vector<int64_t>{2, 2, 2, 2}));
}

// Strided copies (executor/runtime/tensor_copy.h) of every element size, through a transposed
// view (a row at a time, strided on the source) and into a transposed destination.
TEST(TensorCopy, StridedCopiesOfEveryElementSizeKeepEveryElement) {
  for (ScalarType dtype : {ScalarType::UINT8, ScalarType::INT16, ScalarType::FLOAT32, ScalarType::INT64}) {
    const Tensor source = Tensor::empty(dtype, {3, 5});
    const size_t size = source.element_size();
    for (size_t b = 0; b < 15 * size; ++b) source.raw_data()[b] = static_cast<uint8_t>(b * 7 + 1);
    const Tensor transposed = source.as_strided({5, 3}, {1, 5}, 0);
    const Tensor copy = exec::contiguous_copy(transposed);
    ASSERT_TRUE(copy.is_contiguous());
    const Tensor back = Tensor::empty(dtype, {3, 5});
    ASSERT_TRUE(exec::copy_elements(copy, back.as_strided({5, 3}, {1, 5}, 0)).ok());
    for (int64_t i = 0; i < 5; ++i) {
      for (int64_t j = 0; j < 3; ++j) {
        EXPECT_EQ(std::memcmp(copy.raw_data() + (i * 3 + j) * size, source.raw_data() + (j * 5 + i) * size, size), 0)
            << short_name(dtype) << " [" << i << ", " << j << "]";
      }
    }
    EXPECT_EQ(std::memcmp(back.raw_data(), source.raw_data(), 15 * size), 0) << short_name(dtype);
  }
}

}  // namespace
}  // namespace nrt::testing
