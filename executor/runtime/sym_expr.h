// Evaluation of the symbolic size expressions a file records (SymDim.expr, SymInfo.expr) once
// the symbols are bound to concrete sizes by the inputs of a run.
//
// Grammar (what sympy prints for torch's shape expressions, and its srepr form): integers,
// symbols, + - * // % ** and parentheses, unary minus, and the calls Max, Min, Mod, FloorDiv,
// CeilDiv, Add, Mul, Pow, Integer(n) and Symbol('name', assumption=True, ...). `//` and `%` floor
// like Python's. Anything else, an unbound symbol, a division by zero or an int64 overflow makes
// the expression "unknown" (nullopt), never an error: the executor then treats that size as
// dynamic. The text comes from untrusted files, so nesting is bounded.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace nrt::exec {

using SymbolBindings = std::map<std::string, int64_t, std::less<>>;

std::optional<int64_t> evaluate_sym_expr(std::string_view expr, const SymbolBindings& bindings);

// The symbol's name when `expr` is a lone symbol ("s0", "Symbol('s0', positive=True)").
std::optional<std::string> lone_symbol(std::string_view expr);

// Python's floor division and modulo (round toward negative infinity); nullopt for b == 0 or
// INT64_MIN // -1.
std::optional<int64_t> floor_div(int64_t a, int64_t b);
std::optional<int64_t> floor_mod(int64_t a, int64_t b);

}  // namespace nrt::exec
