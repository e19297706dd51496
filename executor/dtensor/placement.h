// A DTensor placement on one mesh dim, as nrt's runtime holds it, and its text as torch prints it:
// `Shard(d)`, `Replicate()`, `Partial(sum)` (sum | avg | product | max | min), and
// `_StridedShard(dim=d, sf=k)`. A DTensor has one placement per mesh dim (a Placements vector).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "core/runtime_enums.h"

namespace nrt::dist {

// The largest _StridedShard split factor nrt runs: torch's is the shard count of the mesh dims
// that shard the same tensor dim after it, far below this; it bounds the chunks a shard holds.
inline constexpr int32_t kMaxSplitFactor = 1 << 16;

struct Placement {
  enum class Kind : uint8_t { kReplicate, kShard, kStridedShard, kPartial };
  Kind kind = Kind::kReplicate;
  int32_t dim = 0;           // kShard, kStridedShard: the tensor dim
  int32_t split_factor = 1;  // kStridedShard
  ReduceOp reduce_op = ReduceOp::SUM;  // kPartial

  static Placement replicate() { return {}; }
  static Placement shard(int32_t dim) { return {Kind::kShard, dim, 1, ReduceOp::SUM}; }
  static Placement partial(ReduceOp op = ReduceOp::SUM) { return {Kind::kPartial, 0, 1, op}; }

  bool is_replicate() const { return kind == Kind::kReplicate; }
  bool is_shard() const { return kind == Kind::kShard || kind == Kind::kStridedShard; }
  bool is_partial() const { return kind == Kind::kPartial; }
  bool is_shard(int32_t d) const { return is_shard() && dim == d; }

  friend bool operator==(const Placement&, const Placement&) = default;
};

using Placements = std::vector<Placement>;

// torch's text: "Shard(0)", "Replicate()", "Partial(sum)", "_StridedShard(dim=0, sf=2)".
std::string to_string(const Placement& placement);
// "[Shard(0), Replicate()]".
std::string to_string(const Placements& placements);

// Parses torch's text (spaces around tokens allowed); InvalidArgument naming the text otherwise.
// A Partial's reduce op is one of sum, avg, product, max, min.
Result<Placement> parse_placement(std::string_view text);

bool all_replicate(const Placements& placements);

}  // namespace nrt::dist
