// One loaded program run from many threads at once (executor.h: an immutable plan shared by
// every run, a frame per concurrent run). Every thread's every output must be bit-identical to
// what one thread computes for the same inputs: a frame shared by mistake shows up as a wrong
// result here (and as a data race under ASan/TSan).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

#include "executor/runtime/executor.h"
#include "io/random_inputs.h"
#include "serializer/open_program.h"
#include "tests/executor/transformer_block_program.h"
#include "tests/runfile.h"

namespace nrt::exec {
namespace {

constexpr int kThreads = 8;

std::vector<uint8_t> bytes_of(const std::vector<NamedOutput>& outputs) {
  std::vector<uint8_t> bytes;
  for (const auto& output : outputs) {
    const auto* t = std::get_if<Tensor>(&output.value);
    if (t == nullptr || !t->defined()) continue;
    EXPECT_TRUE(t->is_contiguous()) << output.name << ": outputs are contiguous copies";
    const auto* data = t->raw_data();
    bytes.insert(bytes.end(), data, data + t->nbytes());
  }
  return bytes;
}

// Runs `inputs[t]` `runs` times on thread t, all threads at once; counts outputs that differ
// from `expected[t]` (or runs that fail).
int concurrent_mismatches(Executor& executor, const std::vector<NamedInputs>& inputs,
                          const std::vector<std::vector<uint8_t>>& expected, int runs) {
  std::atomic<int> mismatches{0};
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (size_t t = 0; t < inputs.size(); ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < static_cast<int>(inputs.size())) std::this_thread::yield();
      for (int r = 0; r < runs; ++r) {
        auto outputs = executor.run(inputs[t]);
        if (!outputs || bytes_of(*outputs) != expected[t]) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  return mismatches.load();
}

std::vector<std::vector<uint8_t>> one_thread(Executor& executor, const std::vector<NamedInputs>& inputs) {
  std::vector<std::vector<uint8_t>> expected;
  for (const auto& input : inputs) {
    auto outputs = executor.run(input);
    EXPECT_TRUE(outputs.ok()) << outputs.error().to_string();
    expected.push_back(outputs ? bytes_of(*outputs) : std::vector<uint8_t>{});
  }
  return expected;
}

// One set of random inputs per thread, seeds 1..kThreads.
std::vector<NamedInputs> seeded_inputs(const Executor& executor) {
  std::vector<NamedInputs> inputs;
  for (int t = 0; t < kThreads; ++t) {
    auto in = random_inputs(executor.user_inputs(), static_cast<uint64_t>(t) + 1);
    EXPECT_TRUE(in.ok()) << in.error().to_string();
    inputs.push_back(in.ok() ? std::move(*in) : NamedInputs{});
  }
  return inputs;
}

TEST(ConcurrentRuns, TransformerBlockFromEightThreadsMatchesOneThread) {
  auto file = verify_in_memory(testing::transformer_block_program());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto executor = Executor::load(std::move(*file));
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  const std::vector<NamedInputs> inputs = seeded_inputs(**executor);
  const auto expected = one_thread(**executor, inputs);
  ASSERT_NE(expected[0], expected[1]) << "different seeds give different outputs (else the test proves nothing)";
  EXPECT_EQ((*executor)->frame_count(), 1u) << "one thread reuses the frame made at load";
  EXPECT_EQ(concurrent_mismatches(**executor, inputs, expected, 200), 0);
  EXPECT_GE((*executor)->frame_count(), 1u);
  EXPECT_LE((*executor)->frame_count(), static_cast<size_t>(kThreads)) << "at most one frame per concurrent run";
  // Afterwards one thread still gets the same results.
  EXPECT_EQ(one_thread(**executor, inputs), expected);
}

// Frames reserved up front serve that many concurrent runs without making more, and give the
// same results.
TEST(ConcurrentRuns, ReservedFramesServeConcurrentRuns) {
  auto file = verify_in_memory(testing::transformer_block_program());
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  auto executor = Executor::load(std::move(*file));
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  ASSERT_TRUE((*executor)->reserve_frames(kThreads).ok());
  EXPECT_EQ((*executor)->frame_count(), static_cast<size_t>(kThreads));
  ASSERT_TRUE((*executor)->reserve_frames(2).ok());
  EXPECT_EQ((*executor)->frame_count(), static_cast<size_t>(kThreads)) << "reserving fewer makes none";
  const std::vector<NamedInputs> inputs = seeded_inputs(**executor);
  const auto expected = one_thread(**executor, inputs);
  EXPECT_EQ(concurrent_mismatches(**executor, inputs, expected, 50), 0);
  EXPECT_EQ((*executor)->frame_count(), static_cast<size_t>(kThreads)) << "no run made a frame of its own";
}

Result<std::unique_ptr<Executor>> load_torch(const std::string& model) {
  NRT_TRY(file, open_program(nrt::testing::runfile("testdata/torch/" + model + "/model.pt2")));
  return Executor::load(std::move(*file));
}

// The graph writes into a buffer in place: every frame has its own copy, reset before every run,
// so concurrent runs neither see each other's writes nor the previous run's.
TEST(ConcurrentRuns, WeightsMutatedInPlaceAreCopiedPerFrame) {
  auto executor = load_torch("inplace_buffer_view__default");
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  std::vector<NamedInputs> inputs;
  for (int t = 0; t < kThreads; ++t) inputs.push_back(*random_inputs((*executor)->user_inputs(), 100 + t));
  const auto expected = one_thread(**executor, inputs);
  EXPECT_EQ(one_thread(**executor, inputs), expected) << "a run does not see the previous run's writes";
  EXPECT_EQ(concurrent_mismatches(**executor, inputs, expected, 50), 0);
}

// Subgraphs run through executors of their own (control flow): their frames are pooled too.
TEST(ConcurrentRuns, SubgraphRunnersRunConcurrently) {
  auto executor = load_torch("cond");
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  std::vector<NamedInputs> inputs;
  for (int t = 0; t < kThreads; ++t) inputs.push_back(*random_inputs((*executor)->user_inputs(), 200 + t));
  const auto expected = one_thread(**executor, inputs);
  EXPECT_EQ(concurrent_mismatches(**executor, inputs, expected, 50), 0);
}

// Symbolic sizes: each thread binds its own batch, so each frame plans memory of its own sizes.
TEST(ConcurrentRuns, FramesPlanTheirOwnSymbolicSizes) {
  auto executor = load_torch("dynamic_batch");
  ASSERT_TRUE(executor.ok()) << executor.error().to_string();
  const auto described = (*executor)->user_inputs();
  ASSERT_EQ(described.size(), 1u);
  ASSERT_EQ(described[0].sizes.size(), 2u);
  ASSERT_FALSE(described[0].sizes[0].expr.empty()) << "the batch is symbolic";
  std::vector<NamedInputs> inputs;
  for (int t = 0; t < kThreads; ++t) {
    Tensor x = Tensor::empty(ScalarType::FLOAT32, {2 + t, described[0].sizes[1].literal});
    for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = static_cast<float>((i * 7 + t) % 11) - 5.0f;
    inputs.push_back(NamedInputs{{described[0].name, x}});
  }
  const auto expected = one_thread(**executor, inputs);
  EXPECT_EQ(concurrent_mismatches(**executor, inputs, expected, 50), 0);
}

}  // namespace
}  // namespace nrt::exec
