#include "serializer/digest.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace nrt {

std::string_view algorithm_name(HashAlgorithm algorithm) {
  return algorithm == HashAlgorithm::kSha256 ? "sha256" : "xxh3";
}

std::optional<HashAlgorithm> algorithm_from_name(std::string_view name) {
  if (name == "xxh3") return HashAlgorithm::kXxh3;
  if (name == "sha256") return HashAlgorithm::kSha256;
  return std::nullopt;
}

std::string Digest::hex() const {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2u);
  for (uint8_t i = 0; i < size; ++i) {
    out += kHex[bytes[i] >> 4];
    out += kHex[bytes[i] & 15];
  }
  return out;
}

std::string Digest::to_string() const { return "nrt1-" + std::string(algorithm_name(algorithm)) + ":" + hex(); }

StreamHasher::StreamHasher(HashAlgorithm algorithm) : algorithm_(algorithm) {
  if (algorithm == HashAlgorithm::kSha256) {
    sha_ = EVP_MD_CTX_new();
    EVP_DigestInit_ex(sha_, EVP_sha256(), nullptr);
  }
}

StreamHasher::~StreamHasher() {
  if (sha_) EVP_MD_CTX_free(sha_);
}

void StreamHasher::bytes_slow(std::span<const uint8_t> data) {
  if (sha_) {
    EVP_DigestUpdate(sha_, data.data(), data.size());
    return;
  }
  if (spill_.empty()) spill_.assign(inline_.begin(), inline_.begin() + static_cast<std::ptrdiff_t>(used_));
  spill_.insert(spill_.end(), data.begin(), data.end());
}

void StreamHasher::f64(double value) {
  if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
  u64(std::bit_cast<uint64_t>(value));
}

void StreamHasher::str(std::string_view text) {
  u64(text.size());
  bytes({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

namespace {

// Canonical big-endian form of the 128-bit value (XXH128_canonicalFromHash), host-independent.
Digest xxh3_digest(const uint8_t* data, size_t size) {
  Digest d;
  d.algorithm = HashAlgorithm::kXxh3;
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, XXH3_128bits(data, size));
  std::memcpy(d.bytes.data(), canonical.digest, 16);
  d.size = 16;
  return d;
}

}  // namespace

Digest StreamHasher::finish() {
  if (sha_ == nullptr) return spill_.empty() ? xxh3_digest(inline_.data(), used_) : xxh3_digest(spill_.data(), spill_.size());
  Digest d;
  d.algorithm = algorithm_;
  unsigned int length = 0;
  EVP_DigestFinal_ex(sha_, d.bytes.data(), &length);
  d.size = static_cast<uint8_t>(length);
  return d;
}

// Large buffers (weight chunks) hash in place: no copy into a record buffer.
Digest digest_of(HashAlgorithm algorithm, std::span<const uint8_t> data) {
  if (algorithm == HashAlgorithm::kXxh3) return xxh3_digest(data.data(), data.size());
  StreamHasher h(algorithm);
  h.bytes(data);
  return h.finish();
}

}  // namespace nrt
