// Conversions to the dtype a tensor has (executor/runtime/identity_conversions.h) through the
// executor with the CPU kernels: to(float32) of a float32 value becomes a view of it, as torch
// returns self, and the program's results are those of the copy; with copy=True, a memory format
// asked, or another dtype, the node still converts.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "executor/runtime/executor.h"
#include "serializer/open_program.h"
#include "testdata/program_builder.h"
#include "tests/executor/load_program.h"
#include "tests/executor/tensor_literals.h"

namespace nrt::testing {
namespace {

using exec::Executor;
using exec::NamedInputs;
using nrt::ScalarType;
using testdata::ProgramBuilder;
namespace arg = testdata::arg;
using testdata::Args;

struct Conversion {
  ScalarType dtype = ScalarType::FLOAT32;
  bool copy = false;                 // copy=True
  bool contiguous_format = false;    // memory_format=torch.contiguous_format
  bool preserve_format = false;      // memory_format=torch.preserve_format
};

// a = x * x; b = a.to(...); c = b + x. Outputs c and b.
ProgramWithWeights conversion_program(const Conversion& c) {
  ProgramBuilder p("identity_conversions_test");
  const auto f32 = ScalarType::FLOAT32;
  auto g = p.graph("main", true);
  const uint32_t x = g.tensor("x", f32, {2, 3});
  g.user_input(arg::tensor(x));
  const uint32_t a = g.tensor("a", f32, {2, 3}), b = g.tensor("b", c.dtype, {2, 3}), sum = g.tensor("c", c.dtype, {2, 3});
  g.node("a", p.op("aten::mul", "Tensor"), Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(a)});
  Args args{{"self", arg::tensor(a)}, {"dtype", arg::scalar_type(c.dtype)}};
  if (c.copy) args.push_back({"copy", arg::boolean(true)});
  if (c.contiguous_format) args.push_back({"memory_format", arg::memory_format(fb::MemoryFormat::CONTIGUOUS)});
  if (c.preserve_format) args.push_back({"memory_format", arg::memory_format(fb::MemoryFormat::PRESERVE)});
  g.node("b", p.op("aten::to", "dtype"), args, {}, {arg::tensor(b)});
  g.node("c", p.op("aten::add", "Tensor"), Args{{"self", arg::tensor(b)}, {"other", arg::tensor(x)}}, {}, {arg::tensor(sum)});
  g.user_output(arg::tensor(sum));
  g.user_output(arg::tensor(b));
  return p.finish();
}

// Whether node "b" runs as a view; its outputs through `outputs`.
bool viewed(const Conversion& c, std::vector<std::vector<float>>& outputs) {
  auto one = load_program(conversion_program(c));
  if (one == nullptr) return false;
  const NamedInputs inputs{{"x", f32({2, 3}, {1.5f, -2.0f, 0.25f, 3.0f, -0.5f, 7.0f})}};
  auto got = one->run(inputs);
  if (!got.ok()) {
    ADD_FAILURE() << got.error().to_string();
    return false;
  }
  outputs.clear();
  for (const auto& out : *got) {
    const auto* t = std::get_if<exec::Tensor>(&out.value);
    if (t == nullptr) continue;
    std::vector<float> values;
    if (t->dtype() == ScalarType::FLOAT64) {
      for (int64_t i = 0; i < t->numel(); ++i) values.push_back(static_cast<float>(t->data<double>()[i]));
    } else {
      values = f32_values(*t);
    }
    outputs.push_back(values);
  }
  for (const auto& node : one->plan().nodes) {
    if (node.name == "b") return node.kernel.is_view;
  }
  return false;
}

TEST(IdentityConversions, ToItsOwnDtypeIsAViewWithTheCopysValues) {
  std::vector<std::vector<float>> view, copy;
  EXPECT_TRUE(viewed(Conversion{}, view));
  Conversion copied;
  copied.copy = true;
  EXPECT_FALSE(viewed(copied, copy)) << "copy=True must copy";
  EXPECT_EQ(view, copy);
  const std::vector<float> squares{2.25f, 4.0f, 0.0625f, 9.0f, 0.25f, 49.0f};
  ASSERT_EQ(view.size(), 2u);
  EXPECT_EQ(view[1], squares);
  Conversion preserved;
  preserved.preserve_format = true;
  EXPECT_TRUE(viewed(preserved, view));
  EXPECT_EQ(view, copy);
}

TEST(IdentityConversions, OtherConversionsStillConvert) {
  std::vector<std::vector<float>> outputs;
  Conversion widened;
  widened.dtype = ScalarType::FLOAT64;
  EXPECT_FALSE(viewed(widened, outputs));
  ASSERT_EQ(outputs.size(), 2u);
  EXPECT_FLOAT_EQ(outputs[1][5], 49.0f);
  Conversion contiguous;
  contiguous.contiguous_format = true;
  EXPECT_FALSE(viewed(contiguous, outputs)) << "a memory format asked may copy";
}

}  // namespace
}  // namespace nrt::testing
