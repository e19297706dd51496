#include "executor/runtime/sym_expr.h"

#include <cctype>
#include <vector>

namespace nrt::exec {

std::optional<int64_t> floor_div(int64_t a, int64_t b) {
  if (b == 0 || (a == INT64_MIN && b == -1)) return std::nullopt;
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

std::optional<int64_t> floor_mod(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

namespace {

constexpr int kMaxDepth = 64;

class Parser {
 public:
  Parser(std::string_view text, const SymbolBindings* bindings) : text_(text), bindings_(bindings) {}

  // Parses the whole text; `value` stays unset when evaluation is impossible.
  bool parse_all(std::optional<int64_t>* value) {
    auto v = expr(0);
    skip();
    if (!ok_ || pos_ != text_.size()) return false;
    *value = v;
    return true;
  }

  // Set when the whole text was exactly one symbol.
  std::optional<std::string> lone;

 private:
  using Value = std::optional<int64_t>;

  void skip() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool take(std::string_view token) {
    skip();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  char peek() {
    skip();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  Value fail() {
    ok_ = false;
    return std::nullopt;
  }

  static Value add(Value a, Value b) {
    int64_t r;
    if (!a || !b || __builtin_add_overflow(*a, *b, &r)) return std::nullopt;
    return r;
  }
  static Value sub(Value a, Value b) {
    int64_t r;
    if (!a || !b || __builtin_sub_overflow(*a, *b, &r)) return std::nullopt;
    return r;
  }
  static Value mul(Value a, Value b) {
    int64_t r;
    if (!a || !b || __builtin_mul_overflow(*a, *b, &r)) return std::nullopt;
    return r;
  }
  static Value power(Value a, Value b) {
    if (!a || !b || *b < 0) return std::nullopt;
    int64_t r = 1;
    for (int64_t i = 0; i < *b; ++i) {
      if (__builtin_mul_overflow(r, *a, &r)) return std::nullopt;
      if (r == 0 || r == 1) break;
    }
    return r;
  }

  Value expr(int depth) {
    if (depth > kMaxDepth) return fail();
    Value v = term(depth + 1);
    while (ok_) {
      if (take("+")) {
        v = add(v, term(depth + 1));
      } else if (peek() == '-') {
        ++pos_;
        v = sub(v, term(depth + 1));
      } else {
        break;
      }
      lone.reset();
    }
    return v;
  }

  Value term(int depth) {
    if (depth > kMaxDepth) return fail();
    Value v = unary(depth + 1);
    while (ok_) {
      if (take("//")) {
        Value d = unary(depth + 1);
        v = v && d ? floor_div(*v, *d) : std::nullopt;
      } else if (skip(), text_.substr(pos_, 2) != "**" && take("*")) {
        v = mul(v, unary(depth + 1));
      } else if (take("%")) {
        Value d = unary(depth + 1);
        v = v && d ? floor_mod(*v, *d) : std::nullopt;
      } else {
        break;
      }
      lone.reset();
    }
    return v;
  }

  Value unary(int depth) {
    if (depth > kMaxDepth) return fail();
    if (take("-")) {
      lone.reset();
      return sub(0, unary(depth + 1));
    }
    Value base = atom(depth + 1);
    if (ok_ && take("**")) {
      lone.reset();
      return power(base, unary(depth + 1));
    }
    return base;
  }

  std::string identifier() {
    skip();
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    return std::string(text_.substr(start, pos_ - start));
  }

  Value symbol(const std::string& name) {
    if (first_atom_) lone = name;
    first_atom_ = false;
    if (bindings_ == nullptr) return std::nullopt;
    auto it = bindings_->find(name);
    if (it == bindings_->end()) return std::nullopt;
    return it->second;
  }

  // Arguments of a call, after '(' was consumed.
  std::vector<Value> arguments(int depth) {
    std::vector<Value> args;
    if (take(")")) return args;
    do {
      args.push_back(expr(depth + 1));
      if (!ok_) return args;
    } while (take(","));
    if (!take(")")) fail();
    return args;
  }

  Value call(const std::string& name, int depth) {
    if (name == "Symbol") {
      // Symbol('s0', positive=True, integer=True)
      skip();
      const char quote = peek();
      if (quote != '\'' && quote != '"') return fail();
      ++pos_;
      const size_t start = pos_;
      while (pos_ < text_.size() && text_[pos_] != quote) ++pos_;
      if (pos_ >= text_.size()) return fail();
      const std::string symbol_name(text_.substr(start, pos_ - start));
      ++pos_;
      while (take(",")) {
        if (identifier().empty() || !take("=") || identifier().empty()) return fail();
      }
      if (!take(")")) return fail();
      return symbol(symbol_name);
    }
    first_atom_ = false;
    lone.reset();
    std::vector<Value> args = arguments(depth);
    if (!ok_) return std::nullopt;
    auto all_known = [&] {
      for (const auto& a : args) {
        if (!a) return false;
      }
      return !args.empty();
    };
    if (name == "Integer" && args.size() == 1) return args[0];
    if ((name == "Max" || name == "Min") && all_known()) {
      int64_t r = *args[0];
      for (const auto& a : args) r = name == "Max" ? std::max(r, *a) : std::min(r, *a);
      return r;
    }
    if (name == "Add" && all_known()) {
      Value r = 0;
      for (const auto& a : args) r = add(r, a);
      return r;
    }
    if (name == "Mul" && all_known()) {
      Value r = 1;
      for (const auto& a : args) r = mul(r, a);
      return r;
    }
    if (args.size() == 2 && args[0] && args[1]) {
      if (name == "Mod" || name == "PythonMod") return floor_mod(*args[0], *args[1]);
      if (name == "FloorDiv") return floor_div(*args[0], *args[1]);
      if (name == "CeilDiv") {
        auto q = floor_div(-*args[0], *args[1]);
        return q ? sub(0, q) : std::nullopt;
      }
      if (name == "Pow") return power(args[0], args[1]);
    }
    if (name == "Max" || name == "Min" || name == "Add" || name == "Mul" || name == "Mod" || name == "PythonMod" ||
        name == "FloorDiv" || name == "CeilDiv" || name == "Pow" || name == "Integer") {
      return std::nullopt;  // known function, unknown operand
    }
    return fail();
  }

  Value atom(int depth) {
    if (depth > kMaxDepth) return fail();
    const char c = peek();
    if (c == '(') {
      ++pos_;
      first_atom_ = false;
      lone.reset();
      Value v = expr(depth + 1);
      if (!take(")")) return fail();
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      first_atom_ = false;
      lone.reset();
      int64_t v = 0;
      bool overflow = false;
      while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
        overflow |= __builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text_[pos_] - '0', &v);
        ++pos_;
      }
      if (overflow) return std::nullopt;
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::string name = identifier();
      if (take("(")) return call(name, depth + 1);
      return symbol(name);
    }
    return fail();
  }

  std::string_view text_;
  const SymbolBindings* bindings_;
  size_t pos_ = 0;
  bool ok_ = true;
  bool first_atom_ = true;
};

}  // namespace

std::optional<int64_t> evaluate_sym_expr(std::string_view expr, const SymbolBindings& bindings) {
  if (expr.size() > 4096) return std::nullopt;
  Parser parser(expr, &bindings);
  std::optional<int64_t> value;
  if (!parser.parse_all(&value)) return std::nullopt;
  return value;
}

std::optional<std::string> lone_symbol(std::string_view expr) {
  if (expr.size() > 4096) return std::nullopt;
  Parser parser(expr, nullptr);
  std::optional<int64_t> value;
  if (!parser.parse_all(&value)) return std::nullopt;
  return parser.lone;
}

}  // namespace nrt::exec
