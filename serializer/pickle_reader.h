// A restricted pickle reader: parses Python pickles of protocols 2 to 5 into a tree of values
// without executing anything. A global (GLOBAL, STACK_GLOBAL) must be on the caller's allowlist,
// else the read fails with NRT-E910 naming it; REDUCE, NEWOBJ and BUILD only record which
// allowlisted callable was applied to which arguments and state (a PickleNode of kind kObject),
// for the caller to interpret. Persistent ids are kept as kPersistentId nodes: resolving them is
// the caller's (serializer/torch_export/torch_saved_tensor.h resolves torch's storages).
//
// Everything is bounded before it is allocated: lengths against the bytes left and a per-string
// cap, the node count, memo entries, stack depth and MARK nesting (docs/ERRORS.md: NRT-E911
// malformed or truncated, NRT-E912 a limit exceeded). Nodes live in one arena and refer to each
// other by index, so a pickle that makes a list hold itself is a cycle of indices, not a leak;
// walkers of the tree bound their own depth.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/error.h"

namespace nrt::pickle {

enum class Kind : uint8_t {
  kNone,
  kBool,
  kInt,     // fits int64; a wider LONG is kBigInt
  kBigInt,  // text: its little-endian two's-complement bytes
  kFloat,
  kString,  // text: UTF-8 as pickled (BINUNICODE and the byte strings of protocol 2)
  kBytes,
  kTuple,
  kList,
  kDict,  // items: key, value, key, value, ...
  kSet,
  kGlobal,        // text: "module.name"
  kObject,        // callee applied to args (REDUCE, NEWOBJ), then `state` (BUILD)
  kPersistentId,  // args: the persistent id value
};

inline constexpr uint32_t kNoNode = UINT32_MAX;

struct PickleNode {
  Kind kind = Kind::kNone;
  bool boolean = false;
  int64_t integer = 0;
  double real = 0;
  std::string text;
  std::vector<uint32_t> items;  // tuple/list/set elements, dict pairs; an object's SETITEMS/APPENDS
  uint32_t callee = kNoNode;    // kObject: a kGlobal node
  uint32_t args = kNoNode;      // kObject: a kTuple node; kPersistentId: the id
  uint32_t state = kNoNode;     // kObject: what BUILD set
};

struct PickleLimits {
  uint64_t max_string_bytes = uint64_t{16} << 20;
  uint32_t max_nodes = 1u << 20;
  uint32_t max_memo = 1u << 20;
  uint32_t max_stack = 1u << 20;
  uint32_t max_marks = 256;  // MARK nesting: how deep tuples, lists and dicts may nest
};

class Pickle {
 public:
  const PickleNode& node(uint32_t index) const { return nodes_[index]; }
  uint32_t root() const { return root_; }
  size_t size() const { return nodes_.size(); }
  int protocol() const { return protocol_; }

  // Helpers for interpreting the tree; each returns nullopt when the node is not of that shape.
  std::optional<int64_t> as_int(uint32_t index) const;
  std::optional<std::string_view> as_string(uint32_t index) const;
  // A tuple's or list's elements.
  std::optional<std::span<const uint32_t>> as_sequence(uint32_t index) const;
  // kObject whose callee is `global` ("module.name").
  bool is_object_of(uint32_t index, std::string_view global) const;
  // The value under a string key of a dict (or an object's dict items).
  std::optional<uint32_t> dict_get(uint32_t dict, std::string_view key) const;

 private:
  friend class PickleParser;
  std::vector<PickleNode> nodes_;
  uint32_t root_ = kNoNode;
  int protocol_ = 0;
};

// Globals a pickle may name, as "module.name".
using Allowlist = std::unordered_set<std::string>;

// `what` names the pickle in messages (an archive entry).
Result<Pickle> read_pickle(std::span<const uint8_t> bytes, const Allowlist& allowed, const std::string& what,
                           const PickleLimits& limits = {});

}  // namespace nrt::pickle
