// The `_c10d_functional::*` CPU kernels without MPI: through a SingleProcessGroup (a world of
// one, where every collective is the identity or a copy), through a two-rank stand-in whose peer
// holds the same tensors as this rank (so output shapes and group_size checks for a size of 2
// are exercised), and their errors: unbound groups, group_size mismatches, unknown reduce ops.
#include <gtest/gtest.h>

#include <cstring>
#include <optional>

#include "executor/runtime/kernel.h"
#include "executor/comm/single_process_group.h"
#include "executor/runtime/tensor_copy.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::testing {
namespace {

using exec::KernelContext;
using exec::KernelRegistry;
using exec::NamedValue;
using exec::ProcessGroup;
using exec::ProcessGroupRef;
using exec::RuntimeValue;
using exec::Tensor;
using nrt::ScalarType;

const Tensor& tensor_of(const RuntimeValue& value) {
  static const Tensor kNone;
  const auto* t = std::get_if<Tensor>(&value);
  return t ? *t : kNone;
}

// A group of two ranks seen from rank 0, whose peer holds exactly this rank's tensors. Float32 only.
class TwinProcessGroup final : public ProcessGroup {
 public:
  const std::string& name() const override { return name_; }
  int rank() const override { return 0; }
  int size() const override { return 2; }
  std::string_view backend() const override { return "twin"; }

  exec::WorkResult all_reduce(Tensor& tensor, ReduceOp op) override {
    if (op != ReduceOp::SUM) return make_error(ErrorCode::InvalidArgument, "twin: sum only");
    // Every element doubles, so the dense block a (possibly permuted) tensor covers can be
    // walked in memory order.
    float* p = tensor.data<float>();
    for (int64_t i = 0; i < tensor.numel(); ++i) p[i] *= 2;
    return exec::completed_work({});
  }
  exec::WorkResult all_gather_into_tensor(const Tensor& input, Tensor& output) override {
    const size_t bytes = input.nbytes();
    std::memcpy(output.raw_data(), input.raw_data(), bytes);
    std::memcpy(output.raw_data() + bytes, input.raw_data(), bytes);
    return exec::completed_work({});
  }
  exec::WorkResult reduce_scatter_tensor(const Tensor& input, Tensor& output, ReduceOp) override {
    const float* in = input.data<float>();  // block 0 (this rank's), from both ranks
    float* out = output.data<float>();
    for (int64_t i = 0; i < output.numel(); ++i) out[i] = 2 * in[i];
    return exec::completed_work({});
  }
  exec::WorkResult all_to_all_single(const Tensor& input, Tensor& output, std::span<const int64_t> output_splits,
                                     std::span<const int64_t> input_splits) override {
    // Both ranks send rank 0 the first input_splits[0] rows of their (identical) input.
    last_output_splits.assign(output_splits.begin(), output_splits.end());
    last_input_splits.assign(input_splits.begin(), input_splits.end());
    const int64_t rows = input_splits.empty() ? input.size(0) / 2 : input_splits[0];
    const size_t bytes = static_cast<size_t>(rows) * input.nbytes() / static_cast<size_t>(input.size(0));
    std::memcpy(output.raw_data(), input.raw_data(), bytes);
    std::memcpy(output.raw_data() + bytes, input.raw_data(), bytes);
    return exec::completed_work({});
  }
  exec::WorkResult broadcast(Tensor&, int) override { return exec::completed_work({}); }
  exec::WorkResult barrier() override { return exec::completed_work({}); }

  std::vector<int64_t> last_output_splits, last_input_splits;

 private:
  std::string name_ = "twin";
};

struct Call {
  Status status;
  std::vector<RuntimeValue> outputs;
};

// Runs kernel `target` with named arguments, as the executor would after binding them.
Call call(std::string_view target, const std::vector<std::pair<std::string, RuntimeValue>>& args,
          std::vector<RuntimeValue> outputs = std::vector<RuntimeValue>(1)) {
  const auto* info = KernelRegistry::global().find(target, exec::DeviceKind::kCpu);
  EXPECT_NE(info, nullptr) << target;
  if (info == nullptr) return {make_error(ErrorCode::InvalidArgument, "no kernel"), {}};
  std::vector<NamedValue> inputs;
  for (const auto& [name, value] : args) inputs.push_back({name, &value});
  KernelContext ctx(target, inputs, outputs, exec::Device{});
  Status status = info->fn(ctx);
  return {status, std::move(outputs)};
}

class CollectiveKernelsTest : public ::testing::Test {
 protected:
  exec::SingleProcessGroup solo_{"solo"};
  TwinProcessGroup twin_;
  RuntimeValue solo() { return ProcessGroupRef{"solo", &solo_}; }
  RuntimeValue twin() { return ProcessGroupRef{"twin", &twin_}; }
};

TEST_F(CollectiveKernelsTest, EveryFunctionalCollectiveHasACpuKernel) {
  for (const char* target :
       {"all_reduce.default", "all_reduce_.default", "all_reduce_coalesced.default", "all_reduce_coalesced_.default",
        "all_gather_into_tensor.default", "all_gather_into_tensor_coalesced.default", "reduce_scatter_tensor.default",
        "reduce_scatter_tensor_coalesced.default", "all_to_all_single.default", "broadcast.default",
        "broadcast_.default", "wait_tensor.default"}) {
    const std::string full = std::string("_c10d_functional::") + target;
    const auto* info = KernelRegistry::global().find(full, exec::DeviceKind::kCpu);
    ASSERT_NE(info, nullptr) << full;
    const bool in_place = full.find("_.default") != std::string::npos || full.find("wait_tensor") != std::string::npos;
    EXPECT_EQ(info->is_view, in_place) << full;
  }
}

TEST_F(CollectiveKernelsTest, AllReduceInWorldOfOneIsAFreshCopy) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  for (const char* op : {"sum", "AVG", "Product", "min", "max"}) {
    auto r = call("_c10d_functional::all_reduce.default",
                  {{"input", x}, {"reduce_op", std::string(op)}, {"group_name", solo()}});
    ASSERT_TRUE(r.status) << op << ": " << r.status.error().to_string();
    const Tensor& out = tensor_of(r.outputs[0]);
    EXPECT_EQ(f32_values(out), f32_values(x)) << op;
    EXPECT_NE(out.storage(), x.storage()) << op << ": the functional form must not alias its input";
  }
}

TEST_F(CollectiveKernelsTest, AllReduceWritesIntoAPlacedStridedOutput) {
  Tensor x = f32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor backing = Tensor::empty(ScalarType::FLOAT32, {3, 2});
  Tensor placed = backing.as_strided({2, 3}, {1, 2}, 0);  // column-major [2,3]
  std::vector<RuntimeValue> outputs{placed};
  auto r = call("_c10d_functional::all_reduce.default",
                {{"input", x}, {"reduce_op", std::string("sum")}, {"group_name", twin()}}, outputs);
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(f32_values(tensor_of(r.outputs[0])), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  EXPECT_EQ(f32_values(x), (std::vector<float>{1, 2, 3, 4, 5, 6})) << "input unchanged";
}

TEST_F(CollectiveKernelsTest, InPlaceFormsReturnTheirInput) {
  Tensor x = f32({4}, {1, 2, 3, 4});
  auto r = call("_c10d_functional::all_reduce_.default",
                {{"input", x}, {"reduce_op", std::string("sum")}, {"group_name", twin()}});
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  EXPECT_EQ(tensor_of(r.outputs[0]).storage(), x.storage());
  EXPECT_EQ(f32_values(x), (std::vector<float>{2, 4, 6, 8}));

  auto b = call("_c10d_functional::broadcast_.default", {{"input", x}, {"src", int64_t{0}}, {"group_name", solo()}});
  ASSERT_TRUE(b.status) << b.status.error().to_string();
  EXPECT_EQ(tensor_of(b.outputs[0]).storage(), x.storage());
}

// Weights are borrowed from the read-only mapping of the file: in-place forms refuse them
// (a KernelError) rather than faulting on the write.
TEST_F(CollectiveKernelsTest, InPlaceFormsRefuseReadOnlyWeights) {
  std::vector<float> bytes = {1, 2, 3, 4};
  auto owner = std::make_shared<int>(0);
  Tensor weight(exec::Storage::borrow(bytes.data(), bytes.size() * sizeof(float), owner), ScalarType::FLOAT32, {4},
                {1});
  auto r = call("_c10d_functional::all_reduce_.default",
                {{"input", weight}, {"reduce_op", std::string("sum")}, {"group_name", twin()}});
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, ErrorCode::KernelError) << r.status.error().to_string();
  EXPECT_NE(r.status.error().message.find("read-only"), std::string::npos) << r.status.error().message;
  auto b = call("_c10d_functional::broadcast_.default",
                {{"input", weight}, {"src", int64_t{0}}, {"group_name", solo()}});
  EXPECT_FALSE(b.status);
  auto coalesced = call("_c10d_functional::all_reduce_coalesced_.default",
                        {{"inputs", std::vector<Tensor>{weight}}, {"reduce_op", std::string("sum")},
                         {"group_name", twin()}});
  EXPECT_FALSE(coalesced.status);
  EXPECT_EQ(bytes, (std::vector<float>{1, 2, 3, 4})) << "nothing was written";
  // The functional form reads the weight and writes a fresh output.
  auto functional = call("_c10d_functional::all_reduce.default",
                         {{"input", weight}, {"reduce_op", std::string("sum")}, {"group_name", twin()}});
  EXPECT_TRUE(functional.status) << functional.status.error().to_string();
}

TEST_F(CollectiveKernelsTest, WaitTensorIsTheIdentityView) {
  Tensor x = f32({2}, {7, 8});
  auto r = call("_c10d_functional::wait_tensor.default", {{"tensor", x}});
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  const Tensor& out = tensor_of(r.outputs[0]);
  EXPECT_EQ(out.storage(), x.storage());
  EXPECT_EQ(out.sizes(), x.sizes());
}

TEST_F(CollectiveKernelsTest, AllGatherStacksRanksAlongDimZero) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  auto one = call("_c10d_functional::all_gather_into_tensor.default",
                  {{"input", x}, {"group_size", int64_t{1}}, {"group_name", solo()}});
  ASSERT_TRUE(one.status) << one.status.error().to_string();
  EXPECT_EQ(tensor_of(one.outputs[0]).sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f32_values(tensor_of(one.outputs[0])), f32_values(x));

  auto two = call("_c10d_functional::all_gather_into_tensor.default",
                  {{"input", x}, {"group_size", int64_t{2}}, {"group_name", twin()}});
  ASSERT_TRUE(two.status) << two.status.error().to_string();
  EXPECT_EQ(tensor_of(two.outputs[0]).sizes(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(f32_values(tensor_of(two.outputs[0])), (std::vector<float>{1, 2, 3, 4, 1, 2, 3, 4}));
}

TEST_F(CollectiveKernelsTest, ReduceScatterKeepsThisRanksBlock) {
  Tensor x = f32({4, 2}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto one =
      call("_c10d_functional::reduce_scatter_tensor.default",
           {{"input", x}, {"reduce_op", std::string("sum")}, {"group_size", int64_t{1}}, {"group_name", solo()}});
  ASSERT_TRUE(one.status) << one.status.error().to_string();
  EXPECT_EQ(f32_values(tensor_of(one.outputs[0])), f32_values(x));

  auto two =
      call("_c10d_functional::reduce_scatter_tensor.default",
           {{"input", x}, {"reduce_op", std::string("sum")}, {"group_size", int64_t{2}}, {"group_name", twin()}});
  ASSERT_TRUE(two.status) << two.status.error().to_string();
  EXPECT_EQ(tensor_of(two.outputs[0]).sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f32_values(tensor_of(two.outputs[0])), (std::vector<float>{2, 4, 6, 8}));

  Tensor odd = f32({3}, {1, 2, 3});
  auto bad =
      call("_c10d_functional::reduce_scatter_tensor.default",
           {{"input", odd}, {"reduce_op", std::string("sum")}, {"group_size", int64_t{2}}, {"group_name", twin()}});
  ASSERT_FALSE(bad.status);
  EXPECT_NE(bad.status.error().message.find("2 equal blocks"), std::string::npos) << bad.status.error().message;
}

TEST_F(CollectiveKernelsTest, AllToAllSingleSizesItsOutputFromTheSplits) {
  Tensor x = f32({3, 2}, {1, 2, 3, 4, 5, 6});
  auto one = call("_c10d_functional::all_to_all_single.default", {{"input", x},
                                                                  {"output_split_sizes", std::vector<int64_t>{}},
                                                                  {"input_split_sizes", std::vector<int64_t>{}},
                                                                  {"group_name", solo()}});
  ASSERT_TRUE(one.status) << one.status.error().to_string();
  EXPECT_EQ(f32_values(tensor_of(one.outputs[0])), f32_values(x));

  // This rank sends 1 row to rank 0 and 2 to rank 1, and receives 1 row from each.
  auto two = call("_c10d_functional::all_to_all_single.default", {{"input", x},
                                                                  {"output_split_sizes", std::vector<int64_t>{1, 1}},
                                                                  {"input_split_sizes", std::vector<int64_t>{1, 2}},
                                                                  {"group_name", twin()}});
  ASSERT_TRUE(two.status) << two.status.error().to_string();
  EXPECT_EQ(tensor_of(two.outputs[0]).sizes(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(f32_values(tensor_of(two.outputs[0])), (std::vector<float>{1, 2, 1, 2}));
  EXPECT_EQ(twin_.last_input_splits, (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(twin_.last_output_splits, (std::vector<int64_t>{1, 1}));

  auto mismatch = call("_c10d_functional::all_to_all_single.default", {{"input", x},
                                                                       {"output_split_sizes", std::vector<int64_t>{2}},
                                                                       {"input_split_sizes", std::vector<int64_t>{3}},
                                                                       {"group_name", solo()}});
  EXPECT_FALSE(mismatch.status) << "one rank cannot receive 2 rows when it sends 3";
}

TEST_F(CollectiveKernelsTest, BroadcastChecksTheSourceRank) {
  Tensor x = f32({2}, {3, 4});
  auto ok = call("_c10d_functional::broadcast.default", {{"input", x}, {"src", int64_t{0}}, {"group_name", solo()}});
  ASSERT_TRUE(ok.status) << ok.status.error().to_string();
  EXPECT_EQ(f32_values(tensor_of(ok.outputs[0])), (std::vector<float>{3, 4}));
  EXPECT_NE(tensor_of(ok.outputs[0]).storage(), x.storage());

  auto bad = call("_c10d_functional::broadcast.default", {{"input", x}, {"src", int64_t{1}}, {"group_name", solo()}});
  ASSERT_FALSE(bad.status);
  EXPECT_NE(bad.status.error().message.find("src 1 is not a rank of process group 'solo' (size 1)"), std::string::npos)
      << bad.status.error().message;
}

TEST_F(CollectiveKernelsTest, CoalescedFormsWorkPerTensor) {
  Tensor a = f32({2}, {1, 2});
  Tensor b = f32({4}, {3, 4, 5, 6});
  auto reduced =
      call("_c10d_functional::all_reduce_coalesced.default",
           {{"inputs", std::vector<Tensor>{a, b}}, {"reduce_op", std::string("sum")}, {"group_name", twin()}});
  ASSERT_TRUE(reduced.status) << reduced.status.error().to_string();
  const auto* list = std::get_if<std::vector<Tensor>>(&reduced.outputs[0]);
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ(f32_values((*list)[0]), (std::vector<float>{2, 4}));
  EXPECT_EQ(f32_values((*list)[1]), (std::vector<float>{6, 8, 10, 12}));
  EXPECT_EQ(f32_values(a), (std::vector<float>{1, 2})) << "the functional form leaves its inputs alone";

  auto in_place = call("_c10d_functional::all_reduce_coalesced_.default",
                       {{"inputs", std::vector<Tensor>{a}}, {"reduce_op", std::string("sum")}, {"group_name", twin()}});
  ASSERT_TRUE(in_place.status) << in_place.status.error().to_string();
  EXPECT_EQ(f32_values(a), (std::vector<float>{2, 4}));

  auto gathered = call("_c10d_functional::all_gather_into_tensor_coalesced.default",
                       {{"inputs", std::vector<Tensor>{b}}, {"group_size", int64_t{2}}, {"group_name", twin()}});
  ASSERT_TRUE(gathered.status) << gathered.status.error().to_string();
  list = std::get_if<std::vector<Tensor>>(&gathered.outputs[0]);
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].sizes(), (std::vector<int64_t>{8}));

  auto scattered =
      call("_c10d_functional::reduce_scatter_tensor_coalesced.default", {{"inputs", std::vector<Tensor>{b}},
                                                                         {"reduce_op", std::string("sum")},
                                                                         {"group_size", int64_t{2}},
                                                                         {"group_name", twin()}});
  ASSERT_TRUE(scattered.status) << scattered.status.error().to_string();
  list = std::get_if<std::vector<Tensor>>(&scattered.outputs[0]);
  ASSERT_NE(list, nullptr);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ(f32_values((*list)[0]), (std::vector<float>{6, 8}));
}

TEST_F(CollectiveKernelsTest, NonFloatDtypesPassThroughAWorldOfOne) {
  Tensor x = Tensor::empty(ScalarType::INT64, {3});
  for (int64_t i = 0; i < 3; ++i) x.data<int64_t>()[i] = -5 + i;
  auto r = call("_c10d_functional::all_reduce.default",
                {{"input", x}, {"reduce_op", std::string("bxor")}, {"group_name", solo()}});
  ASSERT_TRUE(r.status) << r.status.error().to_string();
  const Tensor& out = tensor_of(r.outputs[0]);
  ASSERT_EQ(out.dtype(), ScalarType::INT64);
  EXPECT_EQ(std::memcmp(out.raw_data(), x.raw_data(), x.nbytes()), 0);
}

TEST_F(CollectiveKernelsTest, UnboundGroupNamesTheGroupAndTheLauncher) {
  Tensor x = f32({2}, {1, 2});
  const RuntimeValue unbound = ProcessGroupRef{"tp", nullptr};
  auto r = call("_c10d_functional::all_reduce.default",
                {{"input", x}, {"reduce_op", std::string("sum")}, {"group_name", unbound}});
  ASSERT_FALSE(r.status);
  EXPECT_EQ(r.status.error().code, ErrorCode::CollectiveFailed);
  const std::string& message = r.status.error().message;
  EXPECT_NE(message.find("process group 'tp' is not bound"), std::string::npos) << message;
  EXPECT_NE(message.find("mpirun"), std::string::npos) << message;
  EXPECT_NE(message.find("_c10d_functional::all_reduce.default"), std::string::npos) << message;

  auto gather = call("_c10d_functional::all_gather_into_tensor.default",
                     {{"input", x}, {"group_size", int64_t{2}}, {"group_name", unbound}});
  ASSERT_FALSE(gather.status);
  EXPECT_NE(gather.status.error().message.find("'tp'"), std::string::npos);
}

TEST_F(CollectiveKernelsTest, GroupNameGivenAsAStringIsRefused) {
  Tensor x = f32({2}, {1, 2});
  auto r = call("_c10d_functional::all_reduce.default",
                {{"input", x}, {"reduce_op", std::string("sum")}, {"group_name", std::string("world")}});
  ASSERT_FALSE(r.status);
  EXPECT_NE(r.status.error().message.find("group_name 'world' is a plain string"), std::string::npos)
      << r.status.error().message;
}

TEST_F(CollectiveKernelsTest, GroupSizeMustMatchTheBoundGroup) {
  Tensor x = f32({2, 2}, {1, 2, 3, 4});
  auto gather = call("_c10d_functional::all_gather_into_tensor.default",
                     {{"input", x}, {"group_size", int64_t{2}}, {"group_name", solo()}});
  ASSERT_FALSE(gather.status);
  EXPECT_EQ(gather.status.error().code, ErrorCode::CollectiveFailed);
  EXPECT_NE(gather.status.error().message.find("group_size 2 differs from the size 1 of process group 'solo'"),
            std::string::npos)
      << gather.status.error().message;

  auto scatter =
      call("_c10d_functional::reduce_scatter_tensor.default",
           {{"input", x}, {"reduce_op", std::string("sum")}, {"group_size", int64_t{1}}, {"group_name", twin()}});
  ASSERT_FALSE(scatter.status);
  EXPECT_NE(scatter.status.error().message.find("group_size 1 differs from the size 2 of process group 'twin'"),
            std::string::npos)
      << scatter.status.error().message;
}

TEST_F(CollectiveKernelsTest, UnknownOrUnsupportedReduceOpsAreErrors) {
  Tensor x = f32({2}, {1, 2});
  auto unknown = call("_c10d_functional::all_reduce.default",
                      {{"input", x}, {"reduce_op", std::string("median")}, {"group_name", solo()}});
  ASSERT_FALSE(unknown.status);
  EXPECT_EQ(unknown.status.error().code, ErrorCode::CollectiveFailed);
  EXPECT_NE(unknown.status.error().message.find("unknown reduce_op 'median'"), std::string::npos)
      << unknown.status.error().message;

  auto premul = call(
      "_c10d_functional::reduce_scatter_tensor.default",
      {{"input", x}, {"reduce_op", std::string("premul_sum")}, {"group_size", int64_t{1}}, {"group_name", solo()}});
  ASSERT_FALSE(premul.status);
  EXPECT_NE(premul.status.error().message.find("premul_sum"), std::string::npos) << premul.status.error().message;

  auto not_a_string =
      call("_c10d_functional::all_reduce.default", {{"input", x}, {"reduce_op", int64_t{0}}, {"group_name", solo()}});
  ASSERT_FALSE(not_a_string.status);
  EXPECT_EQ(not_a_string.status.error().code, ErrorCode::KernelError) << "a malformed argument, not a collective";
}

}  // namespace
}  // namespace nrt::testing
