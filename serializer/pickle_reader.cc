#include "serializer/pickle_reader.h"

#include <cstring>
#include <unordered_map>

namespace nrt::pickle {

std::optional<int64_t> Pickle::as_int(uint32_t index) const {
  if (index >= nodes_.size()) return std::nullopt;
  const auto& n = nodes_[index];
  if (n.kind == Kind::kInt) return n.integer;
  if (n.kind == Kind::kBool) return n.boolean ? 1 : 0;
  return std::nullopt;
}

std::optional<std::string_view> Pickle::as_string(uint32_t index) const {
  if (index >= nodes_.size() || nodes_[index].kind != Kind::kString) return std::nullopt;
  return std::string_view(nodes_[index].text);
}

std::optional<std::span<const uint32_t>> Pickle::as_sequence(uint32_t index) const {
  if (index >= nodes_.size()) return std::nullopt;
  const auto& n = nodes_[index];
  if (n.kind != Kind::kTuple && n.kind != Kind::kList) return std::nullopt;
  return std::span<const uint32_t>(n.items);
}

bool Pickle::is_object_of(uint32_t index, std::string_view global) const {
  if (index >= nodes_.size() || nodes_[index].kind != Kind::kObject) return false;
  const uint32_t callee = nodes_[index].callee;
  return callee < nodes_.size() && nodes_[callee].text == global;
}

std::optional<uint32_t> Pickle::dict_get(uint32_t dict, std::string_view key) const {
  if (dict >= nodes_.size()) return std::nullopt;
  const auto& n = nodes_[dict];
  if (n.kind != Kind::kDict && n.kind != Kind::kObject) return std::nullopt;
  for (size_t i = 0; i + 1 < n.items.size(); i += 2) {
    if (auto k = as_string(n.items[i]); k && *k == key) return n.items[i + 1];
  }
  return std::nullopt;
}

class PickleParser {
 public:
  PickleParser(std::span<const uint8_t> bytes, const Allowlist& allowed, const std::string& what,
               const PickleLimits& limits)
      : bytes_(bytes), allowed_(allowed), what_(what), limits_(limits) {}

  Result<Pickle> parse() {
    while (true) {
      const size_t at = pos_;
      NRT_TRY(op, u8());
      Status s = step(*op, at);
      if (!s) return s.error();
      if (stopped_) break;
    }
    if (pos_ != bytes_.size()) {
      return malformed(pos_, std::to_string(bytes_.size() - pos_) + " bytes follow the STOP opcode");
    }
    return std::move(out_);
  }

 private:
  Error malformed(size_t at, const std::string& why) const {
    return Error{ErrorCode::PickleMalformed, what_ + ": byte " + std::to_string(at) + ": " + why};
  }
  Error limit(size_t at, const std::string& why) const {
    return Error{ErrorCode::PickleLimit, what_ + ": byte " + std::to_string(at) + ": " + why};
  }

  Result<uint64_t> little(size_t count) {
    if (bytes_.size() - pos_ < count) return malformed(pos_, "truncated: the pickle ends inside an opcode's argument");
    uint64_t v = 0;
    for (size_t i = 0; i < count; ++i) v |= uint64_t{bytes_[pos_ + i]} << (8 * i);
    pos_ += count;
    return v;
  }
  Result<uint8_t> u8() {
    if (pos_ >= bytes_.size()) return malformed(pos_, "truncated: the pickle ends without a STOP opcode");
    return bytes_[pos_++];
  }
  Result<std::string> take(uint64_t count, size_t at) {
    if (count > limits_.max_string_bytes) {
      return limit(at, "a length of " + std::to_string(count) + " bytes exceeds the limit of " +
                           std::to_string(limits_.max_string_bytes));
    }
    if (bytes_.size() - pos_ < count) {
      return malformed(at, "truncated: a length of " + std::to_string(count) + " bytes but only " +
                               std::to_string(bytes_.size() - pos_) + " remain");
    }
    std::string s(reinterpret_cast<const char*>(bytes_.data() + pos_), count);
    pos_ += count;
    return s;
  }
  Result<std::string> line(size_t at) {
    const size_t start = pos_;
    while (pos_ < bytes_.size() && bytes_[pos_] != '\n') {
      if (pos_ - start > 4096) return limit(at, "a text argument longer than 4096 bytes");
      ++pos_;
    }
    if (pos_ >= bytes_.size()) return malformed(at, "truncated: a text argument without its newline");
    std::string s(reinterpret_cast<const char*>(bytes_.data() + start), pos_ - start);
    ++pos_;
    return s;
  }

  Result<uint32_t> add(PickleNode node, size_t at) {
    if (out_.nodes_.size() >= limits_.max_nodes) {
      return limit(at, "more than " + std::to_string(limits_.max_nodes) + " values");
    }
    out_.nodes_.push_back(std::move(node));
    return static_cast<uint32_t>(out_.nodes_.size() - 1);
  }
  Status push(uint32_t node, size_t at) {
    if (stack_.size() >= limits_.max_stack) {
      return limit(at, "the stack grows beyond " + std::to_string(limits_.max_stack) + " entries");
    }
    stack_.push_back(node);
    return {};
  }
  Status push_new(PickleNode node, size_t at) {
    NRT_TRY(index, add(std::move(node), at));
    return push(*index, at);
  }
  Result<uint32_t> pop(size_t at) {
    if (stack_.size() <= base()) return malformed(at, "stack underflow");
    const uint32_t v = stack_.back();
    stack_.pop_back();
    return v;
  }
  Result<uint32_t> top(size_t at) const {
    if (stack_.size() <= base()) return malformed(at, "stack underflow");
    return stack_.back();
  }
  size_t base() const { return marks_.empty() ? 0 : marks_.back(); }
  // The items above the topmost mark, which is removed.
  Result<std::vector<uint32_t>> pop_mark(size_t at) {
    if (marks_.empty()) return malformed(at, "an opcode needs a MARK but none is open");
    const size_t from = marks_.back();
    marks_.pop_back();
    std::vector<uint32_t> items(stack_.begin() + static_cast<std::ptrdiff_t>(from), stack_.end());
    stack_.resize(from);
    return items;
  }
  Status memo_put(uint64_t key, size_t at) {
    NRT_TRY(v, top(at));
    if (memo_.size() >= limits_.max_memo && !memo_.count(key)) {
      return limit(at, "more than " + std::to_string(limits_.max_memo) + " memo entries");
    }
    memo_[key] = *v;
    return {};
  }
  Status memo_get(uint64_t key, size_t at) {
    auto it = memo_.find(key);
    if (it == memo_.end()) return malformed(at, "memo entry " + std::to_string(key) + " was never stored");
    return push(it->second, at);
  }
  Status global(const std::string& module, const std::string& name, size_t at) {
    const std::string full = module + "." + name;
    if (!allowed_.count(full)) {
      return Error{ErrorCode::PickleGlobalRefused,
                   what_ + ": byte " + std::to_string(at) + ": the pickle names the global '" + full +
                       "', which is not on nrt's allowlist (nothing in a pickle is executed; only the "
                       "classes and functions torch.save uses for tensors and DTensors are recognised)"};
    }
    PickleNode n;
    n.kind = Kind::kGlobal;
    n.text = full;
    return push_new(std::move(n), at);
  }
  Status sequence(Kind kind, std::vector<uint32_t> items, size_t at) {
    PickleNode n;
    n.kind = kind;
    n.items = std::move(items);
    return push_new(std::move(n), at);
  }
  Status apply(uint32_t callee, uint32_t args, size_t at) {
    if (out_.nodes_[callee].kind != Kind::kGlobal) return malformed(at, "REDUCE or NEWOBJ on a value that is not a global");
    if (out_.nodes_[args].kind != Kind::kTuple) return malformed(at, "REDUCE or NEWOBJ with arguments that are not a tuple");
    PickleNode n;
    n.kind = Kind::kObject;
    n.callee = callee;
    n.args = args;
    return push_new(std::move(n), at);
  }
  // SETITEM(S), APPEND(S), ADDITEMS: the container is the value below the added items.
  Status extend(uint32_t container, const std::vector<uint32_t>& items, bool pairs, size_t at) {
    PickleNode& n = out_.nodes_[container];
    const bool ok = pairs ? (n.kind == Kind::kDict || n.kind == Kind::kObject)
                          : (n.kind == Kind::kList || n.kind == Kind::kSet || n.kind == Kind::kObject);
    if (!ok) return malformed(at, pairs ? "SETITEM(S) on a value that is not a dict" : "APPEND(S) on a value that is not a list");
    if (pairs && items.size() % 2 != 0) return malformed(at, "SETITEMS with an odd number of items");
    if (n.items.size() + items.size() > limits_.max_nodes) return limit(at, "a container grows beyond the value limit");
    n.items.insert(n.items.end(), items.begin(), items.end());
    return {};
  }

  Status step(uint8_t op, size_t at) {
    switch (op) {
      case 0x80: {  // PROTO
        NRT_TRY(v, u8());
        if (*v < 2 || *v > 5) return malformed(at, "protocol " + std::to_string(*v) + "; nrt reads protocols 2 to 5");
        out_.protocol_ = *v;
        return {};
      }
      case 0x95: {  // FRAME: a length hint; the opcodes follow in line
        NRT_TRY(n, little(8));
        if (*n > bytes_.size() - pos_) return malformed(at, "truncated: a frame of " + std::to_string(*n) + " bytes");
        return {};
      }
      case '.': {
        NRT_TRY(v, pop(at));
        if (!marks_.empty() || !stack_.empty()) return malformed(at, "STOP leaves values or marks on the stack");
        out_.root_ = *v;
        stopped_ = true;
        return {};
      }
      case '(':
        if (marks_.size() >= limits_.max_marks) {
          return limit(at, "MARKs nest deeper than " + std::to_string(limits_.max_marks));
        }
        marks_.push_back(stack_.size());
        return {};
      case '0': {
        NRT_TRY(v, pop(at));
        return {};
      }
      case '1': {
        NRT_TRY(items, pop_mark(at));
        return {};
      }
      case '2': {
        NRT_TRY(v, top(at));
        return push(*v, at);
      }
      case 'N': return push_new({}, at);
      case 0x88:
      case 0x89: {
        PickleNode n;
        n.kind = Kind::kBool;
        n.boolean = op == 0x88;
        return push_new(std::move(n), at);
      }
      case 'J':
      case 'K':
      case 'M': {
        const size_t width = op == 'J' ? 4 : op == 'K' ? 1 : 2;
        NRT_TRY(raw, little(width));
        PickleNode n;
        n.kind = Kind::kInt;
        n.integer = op == 'J' ? static_cast<int64_t>(static_cast<int32_t>(static_cast<uint32_t>(*raw)))
                              : static_cast<int64_t>(*raw);
        return push_new(std::move(n), at);
      }
      case 0x8a:
      case 0x8b: {  // LONG1, LONG4: little-endian two's complement
        NRT_TRY(count, little(op == 0x8a ? 1 : 4));
        NRT_TRY(raw, take(*count, at));
        PickleNode n;
        if (raw->size() <= 8) {
          uint64_t v = 0;
          for (size_t i = 0; i < raw->size(); ++i) v |= uint64_t{static_cast<uint8_t>((*raw)[i])} << (8 * i);
          if (!raw->empty() && raw->size() < 8 && (static_cast<uint8_t>(raw->back()) & 0x80)) {
            v |= ~uint64_t{0} << (8 * raw->size());  // sign extension
          }
          n.kind = Kind::kInt;
          n.integer = static_cast<int64_t>(v);
        } else {
          n.kind = Kind::kBigInt;
          n.text = std::move(*raw);
        }
        return push_new(std::move(n), at);
      }
      case 'G': {  // BINFLOAT: big-endian double
        if (bytes_.size() - pos_ < 8) return malformed(at, "truncated: the pickle ends inside a float");
        uint64_t bits = 0;
        for (size_t i = 0; i < 8; ++i) bits = (bits << 8) | bytes_[pos_ + i];
        pos_ += 8;
        PickleNode n;
        n.kind = Kind::kFloat;
        std::memcpy(&n.real, &bits, sizeof bits);
        return push_new(std::move(n), at);
      }
      case 'T':
      case 'U':
      case 'X':
      case 0x8c:
      case 0x8d:
      case 'B':
      case 'C':
      case 0x8e:
      case 0x96: {
        const size_t width = (op == 'U' || op == 0x8c || op == 'C') ? 1 : (op == 0x8d || op == 0x8e || op == 0x96) ? 8 : 4;
        NRT_TRY(count, little(width));
        NRT_TRY(text, take(*count, at));
        PickleNode n;
        n.kind = (op == 'B' || op == 'C' || op == 0x8e || op == 0x96) ? Kind::kBytes : Kind::kString;
        n.text = std::move(*text);
        return push_new(std::move(n), at);
      }
      case ')': return sequence(Kind::kTuple, {}, at);
      case 't': {
        NRT_TRY(items, pop_mark(at));
        return sequence(Kind::kTuple, std::move(*items), at);
      }
      case 0x85:
      case 0x86:
      case 0x87: {
        const size_t count = op - 0x84;
        if (stack_.size() - base() < count) return malformed(at, "stack underflow");
        std::vector<uint32_t> items(stack_.end() - static_cast<std::ptrdiff_t>(count), stack_.end());
        stack_.resize(stack_.size() - count);
        return sequence(Kind::kTuple, std::move(items), at);
      }
      case ']': return sequence(Kind::kList, {}, at);
      case 'l': {
        NRT_TRY(items, pop_mark(at));
        return sequence(Kind::kList, std::move(*items), at);
      }
      case '}': return sequence(Kind::kDict, {}, at);
      case 'd': {
        NRT_TRY(items, pop_mark(at));
        if (items->size() % 2 != 0) return malformed(at, "DICT with an odd number of items");
        return sequence(Kind::kDict, std::move(*items), at);
      }
      case 0x8f: return sequence(Kind::kSet, {}, at);
      case 0x91: {
        NRT_TRY(items, pop_mark(at));
        return sequence(Kind::kSet, std::move(*items), at);
      }
      case 'a': {
        NRT_TRY(item, pop(at));
        NRT_TRY(list, top(at));
        return extend(*list, {*item}, false, at);
      }
      case 's': {
        NRT_TRY(value, pop(at));
        NRT_TRY(key, pop(at));
        NRT_TRY(dict, top(at));
        return extend(*dict, {*key, *value}, true, at);
      }
      case 'e':
      case 'u':
      case 0x90: {
        NRT_TRY(items, pop_mark(at));
        NRT_TRY(container, top(at));
        return extend(*container, *items, op == 'u', at);
      }
      case 'c': {
        NRT_TRY(module, line(at));
        NRT_TRY(name, line(at));
        return global(*module, *name, at);
      }
      case 0x93: {  // STACK_GLOBAL
        NRT_TRY(name, pop(at));
        NRT_TRY(module, pop(at));
        const auto m = out_.as_string(*module);
        const auto n = out_.as_string(*name);
        if (!m || !n) return malformed(at, "STACK_GLOBAL needs two strings");
        return global(std::string(*m), std::string(*n), at);
      }
      case 'R':
      case 0x81: {  // REDUCE: callable, args; NEWOBJ: cls, args
        NRT_TRY(args, pop(at));
        NRT_TRY(callee, pop(at));
        return apply(*callee, *args, at);
      }
      case 0x92: {  // NEWOBJ_EX: cls, args, kwargs (kwargs must be empty)
        NRT_TRY(kwargs, pop(at));
        NRT_TRY(args, pop(at));
        NRT_TRY(callee, pop(at));
        const auto& k = out_.nodes_[*kwargs];
        if (k.kind != Kind::kDict || !k.items.empty()) return malformed(at, "NEWOBJ_EX with keyword arguments");
        return apply(*callee, *args, at);
      }
      case 'b': {
        NRT_TRY(state, pop(at));
        NRT_TRY(object, top(at));
        PickleNode& n = out_.nodes_[*object];
        if (n.kind != Kind::kObject) return malformed(at, "BUILD on a value that is not an object");
        if (n.state != kNoNode) return malformed(at, "BUILD twice on one object");
        n.state = *state;
        return {};
      }
      case 'q': {
        NRT_TRY(key, little(1));
        return memo_put(*key, at);
      }
      case 'r': {
        NRT_TRY(key, little(4));
        return memo_put(*key, at);
      }
      case 0x94: return memo_put(memo_.size(), at);  // MEMOIZE
      case 'h': {
        NRT_TRY(key, little(1));
        return memo_get(*key, at);
      }
      case 'j': {
        NRT_TRY(key, little(4));
        return memo_get(*key, at);
      }
      case 'p':
      case 'g': {  // PUT, GET: a decimal key on its own line
        NRT_TRY(text, line(at));
        uint64_t key = 0;
        if (text->empty() || text->size() > 9) return malformed(at, "a memo key that is not a small decimal");
        for (char c : *text) {
          if (c < '0' || c > '9') return malformed(at, "a memo key that is not a decimal");
          key = key * 10 + static_cast<uint64_t>(c - '0');
        }
        return op == 'p' ? memo_put(key, at) : memo_get(key, at);
      }
      case 'Q': {  // BINPERSID
        NRT_TRY(id, pop(at));
        PickleNode n;
        n.kind = Kind::kPersistentId;
        n.args = *id;
        return push_new(std::move(n), at);
      }
      case 0x97:
      case 0x98:
        return malformed(at, "out-of-band buffers (NEXT_BUFFER, READONLY_BUFFER) are not read");
      default: {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", op);
        return malformed(at, std::string("opcode ") + hex +
                                 " is not one nrt reads (protocol 0/1 text opcodes, extension registries and "
                                 "INST/OBJ are not; nor is anything outside the pickle protocols)");
      }
    }
  }

  std::span<const uint8_t> bytes_;
  const Allowlist& allowed_;
  const std::string& what_;
  const PickleLimits& limits_;
  size_t pos_ = 0;
  bool stopped_ = false;
  Pickle out_;
  std::vector<uint32_t> stack_;
  std::vector<size_t> marks_;
  std::unordered_map<uint64_t, uint32_t> memo_;
};

Result<Pickle> read_pickle(std::span<const uint8_t> bytes, const Allowlist& allowed, const std::string& what,
                           const PickleLimits& limits) {
  if (bytes.empty() || bytes[0] != 0x80) {
    return Error{ErrorCode::PickleMalformed, what + ": not a pickle of protocol 2 or later (no PROTO opcode first)"};
  }
  return PickleParser(bytes, allowed, what, limits).parse();
}

}  // namespace nrt::pickle
