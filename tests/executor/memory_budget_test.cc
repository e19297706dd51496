// The memory budget: sizes from a file or bound from inputs cannot make the executor allocate
// past it. A plan over the budget fails before allocating, naming the graph; a kernel's output
// over it fails naming the node; both are NRT-E1008 and leave the executor usable.
#include <gtest/gtest.h>

#include "executor/runtime/executor.h"
#include "executor/runtime/memory_budget.h"
#include "executor/runtime/storage.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"
#include "tests/executor/load_program.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::NamedInputs;
using exec::Tensor;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;
using nrt::ScalarType;

// Restores the budget a test changed.
class BudgetGuard {
 public:
  explicit BudgetGuard(uint64_t bytes) : saved_(exec::memory_budget()) { exec::set_memory_budget(bytes); }
  ~BudgetGuard() { exec::set_memory_budget(saved_); }

 private:
  uint64_t saved_;
};

TEST(MemorySize, ParsesBytesAndBinarySuffixes) {
  EXPECT_EQ(*exec::parse_memory_size("4096"), 4096u);
  EXPECT_EQ(*exec::parse_memory_size("512M"), 512u << 20);
  EXPECT_EQ(*exec::parse_memory_size("8GiB"), uint64_t{8} << 30);
  EXPECT_EQ(*exec::parse_memory_size("1.5G"), uint64_t{3} << 29);
  EXPECT_EQ(*exec::parse_memory_size("2k"), 2048u);
  EXPECT_EQ(*exec::parse_memory_size("1TB"), uint64_t{1} << 40);
  for (const char* bad : {"", "0", "-1", "nan", "inf", "1x", "1.5", "G", "1e3", "99999999999T", "1 G", "0.5"}) {
    auto parsed = exec::parse_memory_size(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.error().code, ErrorCode::InvalidArgument) << bad;
  }
}

TEST(MemoryBudget, StorageCountsAndRefusesPastTheBudget) {
  const uint64_t before = exec::memory_in_use();
  BudgetGuard guard(before + (1 << 20));
  {
    auto first = exec::Storage::allocate(512 << 10);
    EXPECT_EQ(exec::memory_in_use(), before + (512 << 10));
    EXPECT_THROW(exec::Storage::allocate(768 << 10), exec::MemoryBudgetExceeded);
    EXPECT_EQ(exec::memory_in_use(), before + (512 << 10));  // a refusal reserves nothing
    EXPECT_THROW(exec::Storage::allocate(SIZE_MAX), std::bad_alloc);
  }
  EXPECT_EQ(exec::memory_in_use(), before);
  auto fits = exec::Storage::allocate(768 << 10);
  EXPECT_NE(fits->data(), nullptr);
}

// Storage a copy writes in full: the same budget as zeroed storage, and the bytes of its last
// 64-byte line past the request zeroed (a loop that reads whole lines reads no garbage there).
TEST(MemoryBudget, StorageForOverwriteCountsAndZeroesItsLinesTail) {
  const uint64_t before = exec::memory_in_use();
  BudgetGuard guard(before + (1 << 20));
  {
    auto copy = exec::Storage::allocate_for_overwrite(100);
    EXPECT_EQ(exec::memory_in_use(), before + 128);
    for (size_t i = 100; i < 128; ++i) EXPECT_EQ(copy->data()[i], 0) << "byte " << i;
    EXPECT_THROW(exec::Storage::allocate_for_overwrite(2 << 20), exec::MemoryBudgetExceeded);
    const Tensor t = Tensor::empty_for_overwrite(ScalarType::FLOAT32, {3, 5});
    EXPECT_EQ(t.sizes(), (std::vector<int64_t>{3, 5}));
    EXPECT_EQ(t.strides(), (std::vector<int64_t>{5, 1}));
    EXPECT_EQ(t.storage()->bytes(), 60u);
  }
  EXPECT_EQ(exec::memory_in_use(), before);
}

// x: f32[s0]; n = sym_size(x, 0); y = zeros([n, n, n, n]) declared f32[s0, s0, s0, s0].
// `declared_literal` declares y as f32[1, 1, 1, 1] instead, so for n > 1 the kernel (not the
// plan) allocates it.
ProgramWithWeights zeros_program(bool declared_literal) {
  ProgramBuilder p("memory_budget_test");
  const uint32_t size = p.op("aten::sym_size", "int");
  const uint32_t zeros = p.op("aten::zeros", "default");
  auto g = p.graph("main", true);
  fb::TensorMetaT x_meta = testdata::tensor_meta(ScalarType::FLOAT32, {0});
  x_meta.sizes[0] = testdata::symbolic_dim("s0", 2);
  fb::TensorMetaT y_meta = testdata::tensor_meta(ScalarType::FLOAT32, declared_literal ? std::vector<int64_t>{1, 1, 1, 1}
                                                                                      : std::vector<int64_t>{0, 0, 0, 0});
  if (!declared_literal) {
    for (auto& s : y_meta.sizes) s = testdata::symbolic_dim("s0", 2);
    y_meta.strides[0] = testdata::symbolic_dim("s0*s0*s0", 8);
    y_meta.strides[1] = testdata::symbolic_dim("s0*s0", 4);
    y_meta.strides[2] = testdata::symbolic_dim("s0", 2);
  }
  const uint32_t x = g.tensor("x", std::move(x_meta));
  const uint32_t n = g.sym_int("n", "s0", 2);
  const uint32_t y = g.tensor("y", std::move(y_meta));
  g.user_input(arg::tensor(x));
  g.node("n", size, Args{{"self", arg::tensor(x)}, {"dim", arg::integer(0)}}, {}, {arg::sym_int(static_cast<int32_t>(n))});
  const auto item = fb::SymIntItem(static_cast<int32_t>(n), 0);
  g.node("zeros", zeros, Args{{"size", arg::sym_ints({item, item, item, item})}}, {}, {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  return p.finish();
}

Result<std::vector<exec::NamedOutput>> run_with(Executor& executor, int64_t n) {
  return executor.run(NamedInputs{{"x", Tensor::empty(ScalarType::FLOAT32, {n})}});
}

TEST(MemoryBudget, APlanOverTheBudgetFailsBeforeAllocatingAndNamesTheGraph) {
  auto executor = load_program(zeros_program(false));
  ASSERT_NE(executor, nullptr);
  BudgetGuard guard(exec::memory_in_use() + (4 << 20));
  auto huge = run_with(*executor, 1000);  // 4 * 1000^4 bytes: 4 TB
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::MemoryBudgetExceeded) << huge.error().to_string();
  EXPECT_NE(huge.error().message.find("graph 'main'"), std::string::npos) << huge.error().message;
  EXPECT_NE(huge.error().message.find("4000000000000 bytes"), std::string::npos) << huge.error().message;
  auto small = run_with(*executor, 3);
  ASSERT_TRUE(small.ok()) << small.error().to_string();
  EXPECT_EQ(std::get<Tensor>((*small)[0].value).sizes(), (std::vector<int64_t>{3, 3, 3, 3}));
}

TEST(MemoryBudget, AKernelOutputOverTheBudgetNamesTheNode) {
  auto executor = load_program(zeros_program(true));
  ASSERT_NE(executor, nullptr);
  BudgetGuard guard(exec::memory_in_use() + (4 << 20));
  auto huge = run_with(*executor, 64);  // 64 MiB from the kernel, the graph declared 4 bytes
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.error().code, ErrorCode::MemoryBudgetExceeded) << huge.error().to_string();
  EXPECT_NE(huge.error().message.find("zeros"), std::string::npos) << huge.error().message;
  EXPECT_NE(huge.error().message.find("67108864 bytes"), std::string::npos) << huge.error().message;
  EXPECT_NE(huge.error().message.find("[64, 64, 64, 64]"), std::string::npos) << huge.error().message;
  auto fits = run_with(*executor, 1);
  ASSERT_TRUE(fits.ok()) << fits.error().to_string();
}

// A view never materializes: x f32[1] expanded to [s0, s0] with s0 = 1e6 (4 TB if it were
// copied) runs within a 1 MiB budget.
TEST(MemoryBudget, AViewOfAnySizeAllocatesNothing) {
  ProgramBuilder p("memory_budget_test: view");
  const uint32_t size = p.op("aten::sym_size", "int");
  const uint32_t expand = p.op("aten::expand", "default");
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", ScalarType::FLOAT32, {1});
  fb::TensorMetaT s_meta = testdata::tensor_meta(ScalarType::FLOAT32, {0});
  s_meta.sizes[0] = testdata::symbolic_dim("s0", 2);
  const uint32_t shape = g.tensor("shape", std::move(s_meta));
  const uint32_t n = g.sym_int("n", "s0", 2);
  fb::TensorMetaT y_meta = testdata::tensor_meta(ScalarType::FLOAT32, {0, 0});
  for (auto& s : y_meta.sizes) s = testdata::symbolic_dim("s0", 2);
  y_meta.strides[0] = testdata::literal_dim(0);
  y_meta.strides[1] = testdata::literal_dim(0);
  const uint32_t y = g.tensor("y", std::move(y_meta));
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(shape));
  g.node("n", size, Args{{"self", arg::tensor(shape)}, {"dim", arg::integer(0)}}, {},
         {arg::sym_int(static_cast<int32_t>(n))});
  const auto item = fb::SymIntItem(static_cast<int32_t>(n), 0);
  g.node("y", expand, Args{{"self", arg::tensor(x)}, {"size", arg::sym_ints({item, item})}}, {}, {arg::tensor(y)});
  g.user_output(arg::tensor(y));
  auto file = verify_in_memory(p.finish());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  exec::ExecutorOptions options;
  options.copy_outputs = false;  // a caller that keeps the view (nrt-run writes it, and copies)
  auto executor = Executor::load(std::move(*file), options);
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  BudgetGuard guard(exec::memory_in_use() + (1 << 20));
  const int64_t big = 1000000;
  auto shape_input = Tensor(exec::Storage::allocate(0), ScalarType::FLOAT32, {big}, {0}, 0);  // a view too
  auto out = (*executor)->run(NamedInputs{{"x", Tensor::empty(ScalarType::FLOAT32, {1})}, {"shape", shape_input}});
  ASSERT_TRUE(out.ok()) << out.error().to_string();
  EXPECT_EQ(std::get<Tensor>((*out)[0].value).sizes(), (std::vector<int64_t>{big, big}));
}

}  // namespace
}  // namespace nrt::testing
