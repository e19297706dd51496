// libFuzzer target: arbitrary text as a symbolic size expression (SymDim.expr comes from
// untrusted files). Evaluation must terminate without a crash, overflow or unbounded recursion.
// Built and run by scripts/fuzz.sh.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "executor/runtime/sym_expr.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const nrt::exec::SymbolBindings bindings = {{"s0", 8}, {"s1", -3}, {"u0", 9223372036854775807LL}};
  (void)nrt::exec::evaluate_sym_expr(text, bindings);
  (void)nrt::exec::lone_symbol(text);
  return 0;
}
