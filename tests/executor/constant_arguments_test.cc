// ConstantArguments (executor/runtime/constant_arguments.h): which arguments a kept state may rest
// on, and which changes between calls it notices: a constant tensor replaced or viewed
// differently, a plain value changed, an argument more or fewer; a per-call argument's changes it
// ignores. A tensor in storage that may change (not constant), or a tensor list, keeps nothing.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "executor/runtime/constant_arguments.h"
#include "executor/runtime/storage.h"

namespace nrt::exec {
namespace {

// Four floats in a constant storage (as a loaded program's weights).
Tensor constant_tensor(int64_t offset = 0) {
  auto bytes = std::make_shared<std::vector<float>>(8, 1.0f);
  auto storage = Storage::borrow_constant(bytes->data(), bytes->size() * sizeof(float), bytes);
  return Tensor(storage, ScalarType::FLOAT32, {4}, {1}, offset);
}

struct Arguments {
  std::vector<std::string> names;
  std::vector<RuntimeValue> values;
  std::vector<NamedValue> named() const {
    std::vector<NamedValue> out;
    for (size_t i = 0; i < names.size(); ++i) out.push_back({names[i], &values[i]});
    return out;
  }
};

Arguments convolution_like() {
  Arguments a;
  a.names = {"input", "weight", "bias", "stride", "groups", "nrt.batch_norm.eps", "nrt.activation", "nrt.channels_last_output"};
  a.values = {Tensor::empty(ScalarType::FLOAT32, {1, 4}), constant_tensor(), RuntimeValue{},
              std::vector<int64_t>{1, 1}, int64_t{1}, 1e-5, std::string("relu"), true};
  return a;
}

constexpr std::string_view kPerCall[] = {"input"};

std::optional<ConstantArguments> snapshot(const Arguments& a) {
  const std::vector<NamedValue> named = a.named();
  KernelContext ctx("aten::conv2d.default", named, {}, Device{});
  return ConstantArguments::of(ctx, kPerCall);
}

bool matches(const ConstantArguments& kept, const Arguments& a) {
  const std::vector<NamedValue> named = a.named();
  KernelContext ctx("aten::conv2d.default", named, {}, Device{});
  return kept.match(ctx);
}

TEST(ConstantArguments, MatchesTheSameArgumentsWhateverThePerCallOnesHold) {
  Arguments a = convolution_like();
  const auto kept = snapshot(a);
  ASSERT_TRUE(kept.has_value());
  EXPECT_TRUE(matches(*kept, a));
  a.values[0] = Tensor::empty(ScalarType::FLOAT64, {2, 3});  // another input
  EXPECT_TRUE(matches(*kept, a));
}

TEST(ConstantArguments, NoticesEachConstantArgumentChanged) {
  const Arguments seen = convolution_like();
  const auto kept = snapshot(seen);
  ASSERT_TRUE(kept.has_value());
  const std::vector<std::pair<std::string, RuntimeValue>> changes = {
      {"another weight storage", constant_tensor()},
      {"the weight at another offset", std::get<Tensor>(seen.values[1]).as_strided({4}, {1}, 1)},
      {"the weight as other sizes", std::get<Tensor>(seen.values[1]).as_strided({2}, {1}, 0)},
  };
  for (const auto& [label, weight] : changes) {
    Arguments a = seen;
    a.values[1] = weight;
    EXPECT_FALSE(matches(*kept, a)) << label;
  }
  struct Change {
    size_t index;
    RuntimeValue value;
    const char* label;
  };
  const Change plain[] = {{2, constant_tensor(), "a bias where there was None"},
                          {3, std::vector<int64_t>{2, 2}, "stride"},
                          {4, int64_t{2}, "groups"},
                          {5, 1e-3, "eps"},
                          {6, std::string("silu"), "activation"},
                          {7, false, "channels-last"},
                          {4, 1.0, "groups as a float"}};
  for (const Change& change : plain) {
    Arguments a = seen;
    a.values[change.index] = change.value;
    EXPECT_FALSE(matches(*kept, a)) << change.label;
  }
  Arguments fewer = seen;
  fewer.names.pop_back();
  fewer.values.pop_back();
  EXPECT_FALSE(matches(*kept, fewer)) << "an argument fewer";
}

TEST(ConstantArguments, KeepsNothingOnArgumentsThatMayChange) {
  Arguments owned = convolution_like();
  owned.values[1] = Tensor::empty(ScalarType::FLOAT32, {4});  // a weight computed at run time
  EXPECT_FALSE(snapshot(owned).has_value());
  Arguments list = convolution_like();
  list.values[2] = std::vector<Tensor>{constant_tensor()};
  EXPECT_FALSE(snapshot(list).has_value());
}

}  // namespace
}  // namespace nrt::exec
