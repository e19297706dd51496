#include "serializer/torch_export/value_names.h"

#include <bit>

namespace nrt::torch_export {

uint64_t ValueNames::hash_of(std::string_view name) {
  // FNV-1a, then a multiplicative mix so the low bits (the slot) depend on every byte.
  uint64_t h = 1469598103934665603ull;
  for (const char c : name) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  return (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
}

void ValueNames::reserve(size_t count) {
  const size_t wanted = std::bit_ceil(count * 2 + 16);  // load factor at most 1/2
  if (wanted <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(wanted, Slot{});
  size_ = 0;
  for (const Slot& s : old) {
    if (s.index != kEmpty) insert(s.name, s.index);
  }
}

void ValueNames::grow() { reserve(slots_.empty() ? 16 : slots_.size()); }

bool ValueNames::insert(std::string_view name, uint32_t index) {
  if ((size_ + 1) * 2 > slots_.size()) grow();
  const uint64_t h = hash_of(name);
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    Slot& s = slots_[i];
    if (s.index == kEmpty) {
      s = Slot{h, name, index};
      ++size_;
      return true;
    }
    if (s.hash == h && s.name == name) return false;
  }
}

std::optional<uint32_t> ValueNames::find(std::string_view name) const {
  if (slots_.empty()) return std::nullopt;
  const uint64_t h = hash_of(name);
  const size_t mask = slots_.size() - 1;
  for (size_t i = h & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.index == kEmpty) return std::nullopt;
    if (s.hash == h && s.name == name) return s.index;
  }
}

}  // namespace nrt::torch_export
