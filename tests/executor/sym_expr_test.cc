// Symbolic size expressions: sympy's printed forms and srepr, Python floor semantics, and
// graceful "unknown" on anything unsupported or unbound.
#include <gtest/gtest.h>

#include "executor/runtime/sym_expr.h"

namespace nrt::exec {
namespace {

TEST(SymExprTest, EvaluatesPrintedExpressions) {
  const SymbolBindings b = {{"s0", 8}, {"s1", 3}};
  EXPECT_EQ(evaluate_sym_expr("s0", b), 8);
  EXPECT_EQ(evaluate_sym_expr("2*s0 + 1", b), 17);
  EXPECT_EQ(evaluate_sym_expr("s0*s1 - 4", b), 20);
  EXPECT_EQ(evaluate_sym_expr("(s0//3)", b), 2);
  EXPECT_EQ(evaluate_sym_expr("-s1//2", b), -2);  // floor, not truncation
  EXPECT_EQ(evaluate_sym_expr("-7 % 3", b), 2);
  EXPECT_EQ(evaluate_sym_expr("s1**2", b), 9);
  EXPECT_EQ(evaluate_sym_expr("Max(1, s0 - 10)", b), 1);
  EXPECT_EQ(evaluate_sym_expr("Min(s0, s1)", b), 3);
  EXPECT_EQ(evaluate_sym_expr("Mod(s0, 3)", b), 2);
  EXPECT_EQ(evaluate_sym_expr("FloorDiv(s0, 3)", b), 2);
  EXPECT_EQ(evaluate_sym_expr("CeilDiv(s0, 3)", b), 3);
  EXPECT_EQ(evaluate_sym_expr("Symbol('s0', positive=True, integer=True)", b), 8);
  EXPECT_EQ(evaluate_sym_expr("Add(Mul(Integer(2), Symbol('s1', integer=True)), Integer(1))", b), 7);
}

TEST(SymExprTest, UnknownIsNotAnError) {
  const SymbolBindings b = {{"s0", 8}};
  EXPECT_FALSE(evaluate_sym_expr("s9", b));
  EXPECT_FALSE(evaluate_sym_expr("s0 / 2", b));  // true division is not a size
  EXPECT_FALSE(evaluate_sym_expr("s0 // 0", b));
  EXPECT_FALSE(evaluate_sym_expr("9223372036854775807 + 1", b));
  EXPECT_FALSE(evaluate_sym_expr("sqrt(s0)", b));
  EXPECT_FALSE(evaluate_sym_expr("(s0", b));
  EXPECT_FALSE(evaluate_sym_expr("", b));
  EXPECT_FALSE(evaluate_sym_expr(std::string(10000, '('), b));
  EXPECT_FALSE(evaluate_sym_expr(std::string(60, '(') + "1" + std::string(60, ')'), b));  // too deep
}

TEST(SymExprTest, LoneSymbols) {
  EXPECT_EQ(lone_symbol("s0"), "s0");
  EXPECT_EQ(lone_symbol(" s12 "), "s12");
  EXPECT_EQ(lone_symbol("Symbol('s3', positive=True, integer=True)"), "s3");
  EXPECT_FALSE(lone_symbol("2*s0"));
  EXPECT_FALSE(lone_symbol("s0 + 1"));
  EXPECT_FALSE(lone_symbol("Max(s0, 1)"));
  EXPECT_FALSE(lone_symbol("4"));
}

TEST(SymExprTest, PythonFloorSemantics) {
  EXPECT_EQ(floor_div(7, 2), 3);
  EXPECT_EQ(floor_div(-7, 2), -4);
  EXPECT_EQ(floor_div(7, -2), -4);
  EXPECT_EQ(floor_div(-7, -2), 3);
  EXPECT_EQ(floor_mod(-7, 2), 1);
  EXPECT_EQ(floor_mod(7, -2), -1);
  EXPECT_EQ(floor_mod(-8, 2), 0);
  EXPECT_FALSE(floor_div(1, 0));
  EXPECT_FALSE(floor_div(INT64_MIN, -1));
  EXPECT_EQ(floor_mod(INT64_MIN, -1), 0);
}

}  // namespace
}  // namespace nrt::exec
