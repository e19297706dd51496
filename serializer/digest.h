// Digests for nrt's canonical hashes: XXH3-128 (fast, default) or SHA-256 (cryptographic, via
// OpenSSL). A digest prints as "nrt1-xxh3:<32 hex>" or "nrt1-sha256:<64 hex>": the prefix names
// the canonical encoding version and the algorithm, so digests of different kinds never compare
// equal by accident.
#pragma once

#include <array>
#include <bit>
#include <cstring>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

struct evp_md_ctx_st;  // OpenSSL's EVP_MD_CTX

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

  void bytes(std::span<const uint8_t> data) {
    if (sha_ == nullptr && spill_.empty() && used_ + data.size() <= inline_.size()) {  // the common case
      std::memcpy(inline_.data() + used_, data.data(), data.size());
      used_ += data.size();
      return;
    }
    bytes_slow(data);
  }
  void u64(uint64_t value) {
    if constexpr (std::endian::native == std::endian::big) value = __builtin_bswap64(value);
    uint8_t le[8];
    std::memcpy(le, &value, 8);
    bytes(le);
  }
  void i64(int64_t value) { u64(static_cast<uint64_t>(value)); }
  // A double by its value bits; every NaN hashes as the one canonical quiet NaN.
  void f64(double value);
  void str(std::string_view text);
  void digest(const Digest& d) { bytes(d.view()); }
  Digest finish();

 private:
  // XXH3 records (a node, a type) are short: they collect in an inline buffer and are hashed
  // once at finish(), with no allocation unless a record outgrows it. SHA-256 streams.
  void bytes_slow(std::span<const uint8_t> data);
  HashAlgorithm algorithm_;
  std::array<uint8_t, 384> inline_{};
  size_t used_ = 0;
  std::vector<uint8_t> spill_;       // the record once it outgrows inline_
  ::evp_md_ctx_st* sha_ = nullptr;
};

Digest digest_of(HashAlgorithm algorithm, std::span<const uint8_t> data);

}  // namespace nrt
