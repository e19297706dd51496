// Values derived from constant storages (Storage::constant(): a loaded program's weights), kept
// while every storage they came from lives: oneDNN's reordered weights (onednn_kept_weights.h),
// folded batch norms (batch_norm_folding.h). Entries hold their sources weakly, so that a storage
// freed and replaced at the same address never reuses an entry (another storage of the same bytes
// may while the first lives: both are constant, so the bytes are one): such an entry is replaced, and
// the ones whose sources are gone are swept when something new is kept. At most `max_bytes` are
// kept; past that, `keep` keeps nothing and hands the value back for one use. Thread-safe.
#pragma once

#include <array>
#include <map>
#include <memory>
#include <mutex>
#include <optional>

#include "executor/runtime/storage.h"

namespace nrt::exec::cpu {

template <class Key, class Value, size_t kSources>
class KeptByStorage {
 public:
  using Sources = std::array<std::shared_ptr<const Storage>, kSources>;  // null: a source the value lacks

  explicit KeptByStorage(size_t max_bytes) : max_bytes_(max_bytes) {}

  // The bytes of the values kept now.
  size_t bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return bytes_;
  }

  // The value kept for `key` from exactly `sources`, else nullopt.
  std::optional<Value> find(const Key& key, const Sources& sources) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = entries_.find(key);
    if (found == entries_.end()) return std::nullopt;
    if (current(found->second, sources)) return found->second.value;
    bytes_ -= found->second.bytes;
    entries_.erase(found);
    return std::nullopt;
  }

  // Keeps `value` (of `bytes`) for `key` and returns what is kept: another thread's value when it
  // kept one from the same sources first, or `value` itself when kept or past the bound. `kept`,
  // when given, says whether a value is now kept for `key` (false past the bound).
  Value keep(const Key& key, const Sources& sources, Value value, size_t bytes, bool* kept = nullptr) {
    if (kept != nullptr) *kept = false;
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto it = entries_.begin(); it != entries_.end();) {  // what programs since unloaded left behind
      if (expired(it->second)) {
        bytes_ -= it->second.bytes;
        it = entries_.erase(it);
      } else {
        ++it;
      }
    }
    if (bytes_ + bytes > max_bytes_) return value;
    Entry entry{{}, {}, value, bytes};
    for (size_t i = 0; i < kSources; ++i) {
      entry.sources[i] = sources[i];
      entry.present[i] = sources[i] != nullptr;
    }
    auto [at, inserted] = entries_.emplace(key, std::move(entry));
    if (inserted) {
      bytes_ += bytes;
      if (kept != nullptr) *kept = true;
      return value;
    }
    if (!current(at->second, sources)) return value;
    if (kept != nullptr) *kept = true;
    return at->second.value;
  }

 private:
  struct Entry {
    std::array<std::weak_ptr<const Storage>, kSources> sources;
    std::array<bool, kSources> present{};
    Value value;
    size_t bytes = 0;
  };

  // Kept from these sources, or from live constant storages of the same bytes: two loads of one
  // mapped file (two executors, a subgraph and its parent) view the same bytes while both live, and
  // would otherwise replace each other's entry on every call.
  static bool current(const Entry& entry, const Sources& sources) {
    for (size_t i = 0; i < kSources; ++i) {
      const std::shared_ptr<const Storage> held = entry.sources[i].lock();
      if (held == sources[i]) continue;
      if (held && sources[i] && held->constant() && sources[i]->constant() && held->data() == sources[i]->data() &&
          held->bytes() == sources[i]->bytes()) {
        continue;
      }
      return false;
    }
    return true;
  }
  static bool expired(const Entry& entry) {
    for (size_t i = 0; i < kSources; ++i) {
      if (entry.present[i] && entry.sources[i].expired()) return true;
    }
    return false;
  }

  const size_t max_bytes_;
  std::mutex mutex_;
  std::map<Key, Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace nrt::exec::cpu
