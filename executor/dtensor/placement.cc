#include "executor/dtensor/placement.h"

#include <cctype>
#include <charconv>

namespace nrt::dist {
namespace {

struct PartialName {
  std::string_view name;
  ReduceOp op;
};
constexpr PartialName kPartialNames[] = {
    {"sum", ReduceOp::SUM}, {"avg", ReduceOp::AVG}, {"product", ReduceOp::PRODUCT},
    {"max", ReduceOp::MAXIMUM}, {"min", ReduceOp::MINIMUM},
};

std::string_view partial_name(ReduceOp op) {
  for (const auto& entry : kPartialNames) {
    if (entry.op == op) return entry.name;
  }
  return reduce_op_name(op);
}

// A cursor over the text that skips spaces before every token.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : text_(text) {}
  bool eat(std::string_view token) {
    skip();
    if (!text_.starts_with(token)) return false;
    text_.remove_prefix(token.size());
    return true;
  }
  bool integer(int32_t& value) {
    skip();
    auto [end, ec] = std::from_chars(text_.data(), text_.data() + text_.size(), value);
    if (ec != std::errc() || end == text_.data()) return false;
    text_.remove_prefix(static_cast<size_t>(end - text_.data()));
    return true;
  }
  std::string_view word() {
    skip();
    size_t n = 0;
    while (n < text_.size() && std::isalpha(static_cast<unsigned char>(text_[n]))) ++n;
    std::string_view w = text_.substr(0, n);
    text_.remove_prefix(n);
    return w;
  }
  bool done() {
    skip();
    return text_.empty();
  }

 private:
  void skip() {
    while (!text_.empty() && std::isspace(static_cast<unsigned char>(text_.front()))) text_.remove_prefix(1);
  }
  std::string_view text_;
};

}  // namespace

std::string to_string(const Placement& p) {
  switch (p.kind) {
    case Placement::Kind::kReplicate:
      return "Replicate()";
    case Placement::Kind::kShard:
      return "Shard(" + std::to_string(p.dim) + ")";
    case Placement::Kind::kStridedShard:
      return "_StridedShard(dim=" + std::to_string(p.dim) + ", sf=" + std::to_string(p.split_factor) + ")";
    case Placement::Kind::kPartial:
      return "Partial(" + std::string(partial_name(p.reduce_op)) + ")";
  }
  return "?";
}

std::string to_string(const Placements& placements) {
  std::string out = "[";
  for (size_t i = 0; i < placements.size(); ++i) out += (i ? ", " : "") + to_string(placements[i]);
  return out + "]";
}

Result<Placement> parse_placement(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return make_error(ErrorCode::InvalidArgument,
                      "placement '" + std::string(text) + "': " + why +
                          " (expected Shard(d), Replicate(), Partial(sum|avg|product|max|min) or "
                          "_StridedShard(dim=d, sf=k))");
  };
  Cursor c(text);
  Placement p;
  if (c.eat("Replicate")) {
    if (!c.eat("(") || !c.eat(")")) return bad("Replicate takes no argument");
  } else if (c.eat("Shard")) {
    p.kind = Placement::Kind::kShard;
    if (!c.eat("(") || !c.integer(p.dim) || !c.eat(")")) return bad("Shard takes one integer dim");
  } else if (c.eat("_StridedShard")) {
    p.kind = Placement::Kind::kStridedShard;
    if (!c.eat("(") || !c.eat("dim") || !c.eat("=") || !c.integer(p.dim) || !c.eat(",") || !c.eat("sf") ||
        !c.eat("=") || !c.integer(p.split_factor) || !c.eat(")")) {
      return bad("_StridedShard takes dim=d, sf=k");
    }
    if (p.split_factor < 1) return bad("the split factor must be at least 1");
    if (p.split_factor > kMaxSplitFactor) return bad("the split factor exceeds " + std::to_string(kMaxSplitFactor));
  } else if (c.eat("Partial")) {
    p.kind = Placement::Kind::kPartial;
    if (!c.eat("(")) return bad("Partial takes a reduce op");
    const std::string_view op = c.word();
    bool known = false;
    for (const auto& entry : kPartialNames) {
      if (entry.name == op) {
        p.reduce_op = entry.op;
        known = true;
      }
    }
    if (!known) return bad("unknown reduce op '" + std::string(op) + "'");
    if (!c.eat(")")) return bad("Partial takes one reduce op");
  } else {
    return bad("unknown placement");
  }
  if (!c.done()) return bad("unexpected text after the placement");
  if (p.is_shard() && p.dim < 0) return bad("the dim must not be negative");
  return p;
}

bool all_replicate(const Placements& placements) {
  for (const auto& p : placements) {
    if (!p.is_replicate()) return false;
  }
  return true;
}

}  // namespace nrt::dist
