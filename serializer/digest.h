// Digests for nrt's canonical hashes: XXH3-128 (fast, default) or SHA-256 (cryptographic, via
// OpenSSL). A digest prints as "nrt1-xxh3:<32 hex>" or "nrt1-sha256:<64 hex>": the prefix names
// the canonical encoding version and the algorithm, so digests of different kinds never compare
// equal by accident.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace nrt {

enum class HashAlgorithm { kXxh3, kSha256 };

std::string_view algorithm_name(HashAlgorithm algorithm);  // "xxh3", "sha256"
std::optional<HashAlgorithm> algorithm_from_name(std::string_view name);

struct Digest {
  HashAlgorithm algorithm = HashAlgorithm::kXxh3;
  std::array<uint8_t, 32> bytes{};
  uint8_t size = 0;  // 16 for xxh3, 32 for sha256

  std::span<const uint8_t> view() const { return {bytes.data(), size}; }
  std::string hex() const;
  std::string to_string() const;  // "nrt1-xxh3:..."
  friend bool operator==(const Digest& a, const Digest& b) {
    return a.algorithm == b.algorithm && a.size == b.size && a.bytes == b.bytes;
  }
  friend auto operator<=>(const Digest& a, const Digest& b) { return a.bytes <=> b.bytes; }
};

// Incremental hashing of a byte stream with helpers for nrt's canonical encoding: every integer
// is written as 8 little-endian bytes, every string with its length first, so the encoding is
// the same on every host and no two different sequences of fields share bytes.
class StreamHasher {
 public:
  explicit StreamHasher(HashAlgorithm algorithm);
  ~StreamHasher();
  StreamHasher(const StreamHasher&) = delete;
  StreamHasher& operator=(const StreamHasher&) = delete;

  void bytes(std::span<const uint8_t> data);
  void u64(uint64_t value);
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  // A double by its value bits; every NaN hashes as the one canonical quiet NaN.
  void f64(double value);
  void str(std::string_view text);
  void digest(const Digest& d) { bytes(d.view()); }
  Digest finish();

 private:
  struct State;
  HashAlgorithm algorithm_;
  std::unique_ptr<State> state_;
};

Digest digest_of(HashAlgorithm algorithm, std::span<const uint8_t> data);

}  // namespace nrt
