// Collectives in flight between their node and their wait_tensor (executor/comm/pending_collectives.h):
// through a process group whose Work completes only when waited for, the nodes scheduled in
// between run first; a node reading the collective's output directly makes the kernel wait
// itself; a run that fails midway still completes what it issued.
#include <gtest/gtest.h>

#include <cstring>

#include "executor/runtime/executor.h"
#include "executor/comm/pending_collectives.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"

namespace nrt::exec {
namespace {

using nrt::ScalarType;
namespace arg = testdata::arg;
using testdata::Args;

int g_clock = 0;          // events in order
int g_marked_at = 0;      // when async_test::mark ran
int g_in_flight_at_mark = -1;

// A group of two ranks whose peer holds this rank's tensors: all_reduce(sum) doubles, but only
// when its Work is waited for (as a transport finishing later would).
class GatedGroup final : public ProcessGroup {
 public:
  class GatedWork final : public Work {
   public:
    GatedWork(GatedGroup* group, Tensor tensor) : group_(group), tensor_(std::move(tensor)) {}
    ~GatedWork() override { (void)wait(); }
    Status wait(std::optional<std::chrono::milliseconds> = std::nullopt) override {
      if (done_) return {};
      float* p = tensor_.data<float>();
      for (int64_t i = 0; i < tensor_.numel(); ++i) p[i] *= 2;
      done_ = true;
      --group_->in_flight;
      group_->waited_at = ++g_clock;
      return {};
    }
    bool test() override { return done_; }

   private:
    GatedGroup* group_;
    Tensor tensor_;
    bool done_ = false;
  };

  const std::string& name() const override { return name_; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string_view backend() const override { return "gated"; }
  WorkResult all_reduce(Tensor& tensor, ReduceOp) override {
    ++in_flight;
    issued_at = ++g_clock;
    return std::shared_ptr<Work>(std::make_shared<GatedWork>(this, tensor));
  }
  WorkResult all_gather_into_tensor(const Tensor&, Tensor&) override { return unsupported(); }
  WorkResult reduce_scatter_tensor(const Tensor&, Tensor&, ReduceOp) override { return unsupported(); }
  WorkResult all_to_all_single(const Tensor&, Tensor&, std::span<const int64_t>, std::span<const int64_t>) override {
    return unsupported();
  }
  WorkResult broadcast(Tensor&, int) override { return unsupported(); }
  WorkResult barrier() override { return completed_work({}); }

  int in_flight = 0;
  int issued_at = 0, waited_at = 0;

 private:
  static WorkResult unsupported() { return make_error(ErrorCode::NotSupported, "gated: all_reduce only"); }
  std::string name_ = "world";
};

GatedGroup* g_group = nullptr;

// async_test::mark(self) -> self + 1, recording when it ran and what was in flight then.
Status mark(KernelContext& ctx) {
  NRT_TRY(self, ctx.tensor("self", 0));
  Tensor out = Tensor::empty(self->dtype(), self->sizes());
  for (int64_t i = 0; i < out.numel(); ++i) out.data<float>()[i] = self->data<float>()[i] + 1;
  g_marked_at = ++g_clock;
  g_in_flight_at_mark = g_group ? g_group->in_flight : -1;
  ctx.outputs()[0] = out;
  return {};
}
// async_test::boom(self): always fails.
Status boom(KernelContext& ctx) { return ctx.error("boom"); }
const KernelRegistration kMark("async_test::mark.default", DeviceKind::kCpu, {&mark, false});
const KernelRegistration kBoom("async_test::boom.default", DeviceKind::kCpu, {&boom, false});

enum class Between { kIndependent, kReadsTheOutput, kFails };

// all_reduce(x); then a node (independent of it, reading its output, or failing); then wait_tensor.
ProgramWithWeights program(Between between) {
  testdata::ProgramBuilder p("async_collectives_test");
  p.group("world", {0, 1}, "gated");
  const uint32_t all_reduce = p.op("_c10d_functional::all_reduce", "default");
  const uint32_t wait = p.op("_c10d_functional::wait_tensor", "default");
  const uint32_t mark_op = p.op("async_test::mark", "default");
  const uint32_t boom_op = p.op("async_test::boom", "default");
  auto g = p.graph("main", true);
  const auto f32 = ScalarType::FLOAT32;
  const uint32_t x = g.tensor("x", f32, {4});
  const uint32_t y = g.tensor("y", f32, {4});
  g.user_input(arg::tensor(x));
  g.user_input(arg::tensor(y));
  const uint32_t reduced = g.tensor("all_reduce", f32, {4});
  const uint32_t done = g.tensor("wait_tensor", f32, {4});
  const uint32_t marked = g.tensor("mark", f32, {4});
  g.node("all_reduce", all_reduce,
         Args{{"input", arg::tensor(x)}, {"reduce_op", arg::string("sum")}, {"group_name", arg::string("world")}}, {},
         {arg::tensor(reduced)});
  const uint32_t source = between == Between::kReadsTheOutput ? reduced : y;
  g.node("mark", between == Between::kFails ? boom_op : mark_op, Args{{"self", arg::tensor(source)}}, {},
         {arg::tensor(marked)});
  g.node("wait_tensor", wait, Args{{"tensor", arg::tensor(reduced)}}, {}, {arg::tensor(done)});
  g.user_output(arg::tensor(done));
  g.user_output(arg::tensor(marked));
  return p.finish();
}

struct Fixture {
  std::shared_ptr<GatedGroup> group = std::make_shared<GatedGroup>();
  std::unique_ptr<Executor> executor;
  NamedInputs inputs;

  explicit Fixture(Between between) {
    g_group = group.get();
    g_clock = g_marked_at = 0;
    g_in_flight_at_mark = -1;
    auto file = verify_in_memory(program(between));
    EXPECT_TRUE(file.ok()) << file.error().to_string();
    auto registry = std::make_shared<ProcessGroupRegistry>();
    registry->bind("world", group);
    ExecutorOptions options;
    options.process_groups = registry;
    auto loaded = Executor::load(std::move(*file), options);
    EXPECT_TRUE(loaded.ok()) << loaded.error().to_string();
    if (loaded) executor = std::move(*loaded);
    Tensor x = Tensor::empty(ScalarType::FLOAT32, {4}), y = Tensor::empty(ScalarType::FLOAT32, {4});
    for (int i = 0; i < 4; ++i) {
      x.data<float>()[i] = static_cast<float>(i);
      y.data<float>()[i] = 10.0f * static_cast<float>(i);
    }
    inputs = {{"x", x}, {"y", y}};
  }
  ~Fixture() { g_group = nullptr; }
};

std::vector<float> values(const RuntimeValue& value) {
  const Tensor& t = std::get<Tensor>(value);
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

TEST(AsyncCollectives, NodesBetweenACollectiveAndItsWaitRunWhileItIsInFlight) {
  Fixture f(Between::kIndependent);
  ASSERT_NE(f.executor, nullptr);
  EXPECT_TRUE(f.executor->plan().nodes[0].defer_collective_wait);
  auto outputs = f.executor->run(f.inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  EXPECT_EQ(g_in_flight_at_mark, 1) << "the all_reduce was still in flight while the independent node ran";
  EXPECT_LT(f.group->issued_at, g_marked_at);
  EXPECT_LT(g_marked_at, f.group->waited_at) << "wait_tensor waited for it, after the node in between";
  EXPECT_EQ(values((*outputs)[0].value), (std::vector<float>{0, 2, 4, 6}));
  EXPECT_EQ(values((*outputs)[1].value), (std::vector<float>{1, 11, 21, 31}));
  EXPECT_EQ(f.group->in_flight, 0);
}

TEST(AsyncCollectives, AReaderOtherThanWaitTensorMakesTheKernelWait) {
  Fixture f(Between::kReadsTheOutput);
  ASSERT_NE(f.executor, nullptr);
  EXPECT_FALSE(f.executor->plan().nodes[0].defer_collective_wait);
  auto outputs = f.executor->run(f.inputs);
  ASSERT_TRUE(outputs.ok()) << outputs.error().to_string();
  EXPECT_EQ(g_in_flight_at_mark, 0) << "complete before anything reads it";
  EXPECT_LT(f.group->waited_at, g_marked_at);
  EXPECT_EQ(values((*outputs)[1].value), (std::vector<float>{1, 3, 5, 7})) << "mark read the reduced values";
}

TEST(AsyncCollectives, AFailedRunStillCompletesWhatItIssued) {
  Fixture f(Between::kFails);
  ASSERT_NE(f.executor, nullptr);
  auto outputs = f.executor->run(f.inputs);
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.error().message.find("boom"), std::string::npos) << outputs.error().message;
  EXPECT_EQ(f.group->in_flight, 0) << "the executor waited for the all_reduce before the frame was reused";
  EXPECT_GT(f.group->waited_at, 0);
}

TEST(PendingCollectivesTest, WaitFindsTheWorkOfItsTensorOnly) {
  GatedGroup group;
  PendingCollectives pending;
  Tensor a = Tensor::empty(ScalarType::FLOAT32, {2}), b = Tensor::empty(ScalarType::FLOAT32, {2});
  a.data<float>()[0] = 1;
  b.data<float>()[0] = 5;
  pending.add(a, *group.all_reduce(a, ReduceOp::SUM));
  pending.add(b, *group.all_reduce(b, ReduceOp::SUM));
  EXPECT_EQ(pending.size(), 2u);
  Tensor unrelated = Tensor::empty(ScalarType::FLOAT32, {2});
  EXPECT_TRUE(pending.wait(unrelated).ok());
  EXPECT_EQ(pending.size(), 2u) << "nothing in flight writes it";
  EXPECT_TRUE(pending.wait(b).ok());
  EXPECT_EQ(b.data<float>()[0], 10);
  EXPECT_EQ(a.data<float>()[0], 1) << "a is still in flight";
  EXPECT_TRUE(pending.wait_all().ok());
  EXPECT_EQ(a.data<float>()[0], 2);
  EXPECT_TRUE(pending.empty());
}

}  // namespace
}  // namespace nrt::exec
