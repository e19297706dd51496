// Contiguous copies of an attention's operands (executor/runtime/attention_operand_views.h)
// through the executor with the CPU kernels: `x.view(1, s, heads, d).transpose(1, 2).contiguous()`
// read only by scaled_dot_product_attention becomes a view, and the attention gives the bits it
// gave on the copies (the unviewed program makes the copies graph outputs), on heads small enough
// for nrt's own products and on heads that go to oneDNN's, with a mask; a write in place between
// the copy and the attention, or a memory format other than contiguous, keeps the copy.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "executor/runtime/executor.h"
#include "testdata/program_builder.h"
#include "tests/executor/fused_and_apart.h"
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

constexpr int64_t kHeads = 4;

struct Chain {
  int64_t positions = 6, depth = 8;
  bool masked = false;          // a bool attn_mask [positions, positions]
  bool write_between = false;   // the key's rows doubled in place after the copies: kept
  bool preserve_format = false; // memory_format=torch.preserve_format on the copies: kept
  bool copies_are_outputs = false;
};

const char* const kOperands[] = {"q", "k", "v"};

// For each operand: rows = x + x ([1, positions, heads * depth]), viewed as heads, transposed to
// [1, heads, positions, depth] and copied.
ProgramWithWeights chain_program(const Chain& c) {
  ProgramBuilder p("attention_operand_views_test");
  const auto f32 = ScalarType::FLOAT32;
  auto g = p.graph("main", true);
  const int64_t s = c.positions, d = c.depth;
  std::vector<uint32_t> copies, rows;
  for (const std::string name : kOperands) {
    const uint32_t x = g.tensor(name + "_in", f32, {1, s, kHeads * d});
    g.user_input(arg::tensor(x));
    const uint32_t doubled = g.tensor(name + "_rows", f32, {1, s, kHeads * d});
    g.node(name + "_rows", p.op("aten::add", "Tensor"), Args{{"self", arg::tensor(x)}, {"other", arg::tensor(x)}}, {},
           {arg::tensor(doubled)});
    const uint32_t heads = g.tensor(name + "_heads", f32, {1, s, kHeads, d});
    g.node(name + "_heads", p.op("aten::view", "default"),
           Args{{"self", arg::tensor(doubled)}, {"size", arg::integers({1, s, kHeads, d})}}, {}, {arg::tensor(heads)});
    const uint32_t moved = g.tensor(name + "_moved", f32, {1, kHeads, s, d});
    g.node(name + "_moved", p.op("aten::transpose", "int"),
           Args{{"self", arg::tensor(heads)}, {"dim0", arg::integer(1)}, {"dim1", arg::integer(2)}}, {}, {arg::tensor(moved)});
    const uint32_t copy = g.tensor(name + "_copy", f32, {1, kHeads, s, d});
    Args args{{"self", arg::tensor(moved)}};
    if (c.preserve_format) args.push_back({"memory_format", arg::memory_format(fb::MemoryFormat::PRESERVE)});
    g.node(name + "_copy", p.op("aten::contiguous", "default"), args, {}, {arg::tensor(copy)});
    copies.push_back(copy);
    rows.push_back(doubled);
  }
  uint32_t mask = 0;
  if (c.masked) {
    mask = g.tensor("mask", ScalarType::BOOL, {s, s});
    g.user_input(arg::tensor(mask));
  }
  uint32_t written = 0;
  if (c.write_between) {
    written = g.tensor("written", f32, {1, s, kHeads * d});
    g.node("written", p.op("aten::mul_", "Scalar"), Args{{"self", arg::tensor(rows[1])}, {"other", arg::real(2.0)}}, {},
           {arg::tensor(written)});
  }
  const uint32_t out = g.tensor("out", f32, {1, kHeads, s, d});
  Args args{{"query", arg::tensor(copies[0])}, {"key", arg::tensor(copies[1])}, {"value", arg::tensor(copies[2])}};
  if (c.masked) args.push_back({"attn_mask", arg::tensor(mask)});
  args.push_back({"scale", arg::real(0.3)});
  g.node("out", p.op("aten::scaled_dot_product_attention", "default"), args, {}, {arg::tensor(out)});
  g.user_output(arg::tensor(out));
  if (c.write_between) g.user_output(arg::tensor(written));
  if (c.copies_are_outputs) {
    for (uint32_t copy : copies) g.user_output(arg::tensor(copy));
  }
  return p.finish();
}

// How many of the three copies run as views (aten::alias: one unnamed argument).
int viewed(const Executor& e) {
  int count = 0;
  for (const auto& node : e.plan().nodes) {
    if (node.target == "aten::contiguous.default" && node.arg_names.size() == 1 && node.arg_names[0].empty()) ++count;
  }
  return count;
}

// Runs `c` and the program with its copies kept: the attention's bits. Returns the copies viewed.
int check_chain(const Chain& c, const std::string& label) {
  auto one = load_program(chain_program(c));
  Chain apart = c;
  apart.copies_are_outputs = true;
  auto copied = load_program(chain_program(apart));
  if (one == nullptr || copied == nullptr) return -1;
  EXPECT_EQ(viewed(*copied), 0) << label << ": a copy read as a graph output must stay a copy";
  NamedInputs inputs;
  for (int i = 0; i < 3; ++i) {
    inputs.emplace(std::string(kOperands[i]) + "_in", sine_f32({1, c.positions, kHeads * c.depth}, 0.37, i + 1, 1.0));
  }
  if (c.masked) inputs.emplace("mask", causal_bool_mask(c.positions));
  if (!same_bits_as_apart(*one, *copied, inputs, label, c.write_between ? 2 : 1)) return -1;
  return viewed(*one);
}

TEST(AttentionOperandViews, TheAttentionReadsTheTransposedHeadsWithTheCopiesBits) {
  EXPECT_EQ(check_chain(Chain{}, "small heads (nrt's own products)"), 3);
  Chain masked;
  masked.masked = true;
  EXPECT_EQ(check_chain(masked, "small heads with a mask"), 3);
  // 96 x 96 x 16 multiply-adds a head: above small_product.h's bound, the products go to oneDNN
  // with the heads' row stride as their leading dimension.
  Chain wide;
  wide.positions = 96;
  wide.depth = 16;
  wide.masked = true;
  EXPECT_EQ(check_chain(wide, "heads on oneDNN's products"), 3);
}

TEST(AttentionOperandViews, CopiesTheAttentionMustNotSeeThroughStayCopies) {
  // Viewed, the attention would read the key's rows after they were doubled. A write in place
  // anywhere between a copy and the attention keeps it: all three here.
  Chain written;
  written.write_between = true;
  EXPECT_EQ(check_chain(written, "the key's rows written in place after the copies"), 0);
  Chain preserved;
  preserved.preserve_format = true;
  EXPECT_EQ(check_chain(preserved, "memory_format=preserve_format"), 0);
}

}  // namespace
}  // namespace nrt::testing
