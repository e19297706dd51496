#include "serializer/digest.h"

#include <openssl/evp.h>
#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace nrt {

// XXH3 records are short (a node, a type): buffering them and hashing once is several times
// faster than a streaming state; SHA-256 streams through OpenSSL.
struct StreamHasher::State {
  std::vector<uint8_t> buffer;
  EVP_MD_CTX* sha = nullptr;
};

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

StreamHasher::StreamHasher(HashAlgorithm algorithm) : algorithm_(algorithm), state_(std::make_unique<State>()) {
  if (algorithm == HashAlgorithm::kXxh3) {
    state_->buffer.reserve(256);
  } else {
    state_->sha = EVP_MD_CTX_new();
    EVP_DigestInit_ex(state_->sha, EVP_sha256(), nullptr);
  }
}

StreamHasher::~StreamHasher() {
  if (state_->sha) EVP_MD_CTX_free(state_->sha);
}

void StreamHasher::bytes(std::span<const uint8_t> data) {
  if (state_->sha == nullptr) {
    state_->buffer.insert(state_->buffer.end(), data.begin(), data.end());
  } else {
    EVP_DigestUpdate(state_->sha, data.data(), data.size());
  }
}

void StreamHasher::u64(uint64_t value) {
  uint8_t le[8];
  for (int i = 0; i < 8; ++i) le[i] = static_cast<uint8_t>(value >> (8 * i));
  bytes(le);
}

void StreamHasher::f64(double value) {
  if (std::isnan(value)) value = std::numeric_limits<double>::quiet_NaN();
  u64(std::bit_cast<uint64_t>(value));
}

void StreamHasher::str(std::string_view text) {
  u64(text.size());
  bytes({reinterpret_cast<const uint8_t*>(text.data()), text.size()});
}

Digest StreamHasher::finish() {
  Digest d;
  d.algorithm = algorithm_;
  if (state_->sha == nullptr) {
    // Canonical big-endian form of the 128-bit value (XXH128_canonicalFromHash), host-independent.
    XXH128_canonical_t canonical;
    XXH128_canonicalFromHash(&canonical, XXH3_128bits(state_->buffer.data(), state_->buffer.size()));
    std::memcpy(d.bytes.data(), canonical.digest, 16);
    d.size = 16;
  } else {
    unsigned int length = 0;
    EVP_DigestFinal_ex(state_->sha, d.bytes.data(), &length);
    d.size = static_cast<uint8_t>(length);
  }
  return d;
}

Digest digest_of(HashAlgorithm algorithm, std::span<const uint8_t> data) {
  StreamHasher h(algorithm);
  h.bytes(data);
  return h.finish();
}

}  // namespace nrt
