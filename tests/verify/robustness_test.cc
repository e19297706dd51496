// Damaged copies of a valid file: ProgramFile::from_bytes must return a clean error, or a program
// that is valid and safe to walk completely (UnPack touches every field, program_to_json prints
// it, and its JSON form must convert back into a valid file). Never a crash, an out-of-bounds
// read or undefined behaviour: run under `bazel test --config=asan`.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.h"
#include "serializer/json_form.h"
#include "serializer/program_file.h"
#include "tests/verify/sample_program.h"

namespace nrt {
namespace {
// Line-buffered stdout: these tests hunt crashes, and a crash must not swallow GoogleTest's
// buffered report of which case was running.
[[maybe_unused]] const int kLineBufferedStdout = std::setvbuf(stdout, nullptr, _IOLBF, 0);

using testing::make_sample_program;
using testing::serialize;
using testing::serialize_and_open;

// Single-bit flips cover the whole file when it is at most this large, else this prefix (which
// holds the header and the FlatBuffer of the sample).
constexpr size_t kFlipLimit = 64 * 1024;

std::vector<uint8_t> sample_bytes() {
  auto bytes = serialize(make_sample_program());
  EXPECT_TRUE(bytes.ok()) << bytes.error().to_string();
  return bytes.ok() ? std::move(*bytes) : std::vector<uint8_t>{};
}

// Walks a program the verifier accepted; returns a description of what went wrong, or "".
std::string walk(const ProgramFile& file) {
  auto unpacked = unpack_program(file);
  if (unpacked.storages.size() != unpacked.program.storages.size()) return "unpack lost storages";
  uint64_t weight_bytes = 0;
  for (const auto& s : unpacked.storages) weight_bytes += s.size();
  if (weight_bytes > file.file_bytes().size()) return "storages larger than the file";

  auto json = program_to_json(file);
  if (!json) {
    // A flipped bit inside a string may leave invalid UTF-8, which JSON cannot carry.
    return json.error().code == ErrorCode::InvalidArgument ? "" : "program_to_json: " + json.error().to_string();
  }
  auto parsed = program_from_json(*json);
  if (!parsed) return "JSON form does not parse back: " + parsed.error().to_string();
  auto reopened = serialize_and_open(*parsed, VerifyOptions{.deep = true});
  if (!reopened) return "JSON form does not verify again: " + reopened.error().to_string();
  return "";
}

// What a series of damaged files gave: how many verified, which errors, and the walks that broke
// (all counted, the first few kept with the damage that caused them).
struct Tally {
  size_t valid = 0;
  std::map<ErrorCode, size_t> errors;
  size_t unchanged = 0;  // verified with header and FlatBuffer identical to the sample's
  size_t broken_walks = 0;
  std::vector<std::string> examples;
  size_t total_errors() const {
    size_t n = 0;
    for (const auto& [code, count] : errors) n += count;
    return n;
  }
};

// End of the FlatBuffer (header bytes 24..31 hold its size; it starts at 64).
size_t flatbuffer_end(const std::vector<uint8_t>& bytes) {
  uint64_t size = 0;
  for (size_t i = 8; i-- > 0;) size = (size << 8) | bytes.at(24 + i);
  return static_cast<size_t>(64 + size);
}

// Opens `bytes` (a damaged copy of `original`); on success walks the program, unless its header
// and FlatBuffer are those of `original` (damage in the padding: the same program, walked once by
// SampleIsValidAndWalks; the deep checksums vouch for the weights).
void check(std::vector<uint8_t> bytes, const std::vector<uint8_t>& original, const std::string& what, Tally& tally) {
  const size_t fb_end = flatbuffer_end(original);
  const bool same_program =
      bytes.size() == original.size() &&
      std::equal(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(fb_end), original.begin());
  auto file = ProgramFile::from_bytes(std::move(bytes), VerifyOptions{.deep = true});
  if (!file) {
    EXPECT_NE(file.error().code, ErrorCode::Ok) << what;
    EXPECT_FALSE(file.error().message.empty()) << what << ": error without a message";
    ++tally.errors[file.error().code];
    return;
  }
  ++tally.valid;
  if (same_program) {
    ++tally.unchanged;
    return;
  }
  const std::string problem = walk(*file);
  if (problem.empty()) return;
  ++tally.broken_walks;
  if (tally.examples.size() < 5) tally.examples.push_back(what + ": " + problem);
}

std::string examples(const Tally& tally) {
  std::string text;
  for (const auto& e : tally.examples) text += "\n  " + e;
  return text;
}

TEST(Robustness, SampleIsValidAndWalks) {
  auto bytes = sample_bytes();
  ASSERT_GT(bytes.size(), 4096u) << "the sample must have a weight segment";
  auto file = ProgramFile::from_bytes(bytes, VerifyOptions{.deep = true});
  ASSERT_TRUE(file.ok()) << file.error().to_string();
  EXPECT_EQ(walk(*file), "");
}

// FlatBuffers strings are meant to be UTF-8 but nothing checks it. Such a file may be refused by
// the verifier or by program_to_json; what must not happen is .nrt.json text that cannot be read
// back (a conversion that writes a file no tool can load).
TEST(Robustness, NonUtf8StringNeverYieldsUnreadableJson) {
  auto program = make_sample_program();
  program.program.producer = std::string("torch \xff\xfe", 8);
  auto file = serialize_and_open(program);
  if (!file) {
    EXPECT_NE(file.error().code, ErrorCode::Ok);
    return;
  }
  auto json = program_to_json(*file);
  if (!json) {
    EXPECT_EQ(json.error().code, ErrorCode::InvalidArgument) << json.error().to_string();
    return;
  }
  auto parsed = program_from_json(*json);
  EXPECT_TRUE(parsed.ok()) << "program_to_json wrote text program_from_json refuses: " << parsed.error().to_string();
}

// The header's sizes reach the last byte of the file, so every proper prefix must be rejected.
TEST(Robustness, EveryTruncationIsRejected) {
  const auto bytes = sample_bytes();
  ASSERT_FALSE(bytes.empty());
  Tally tally;
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto file = ProgramFile::from_bytes(std::vector<uint8_t>(bytes.begin(), bytes.begin() + n));
    ASSERT_FALSE(file.ok()) << "prefix of " << n << " bytes was accepted";
    ++tally.errors[file.error().code];
  }
  EXPECT_EQ(tally.errors[ErrorCode::FileTooSmall], 64u);
  EXPECT_EQ(tally.total_errors(), bytes.size());
}

TEST(Robustness, EverySingleBitFlipIsRejectedOrSafe) {
  const auto bytes = sample_bytes();
  ASSERT_FALSE(bytes.empty());
  const size_t limit = bytes.size() < kFlipLimit ? bytes.size() : kFlipLimit;
  Tally tally;
  for (size_t byte = 0; byte < limit; ++byte) {
    for (int bit = 0; bit < 8; ++bit) {
      auto damaged = bytes;
      damaged[byte] ^= static_cast<uint8_t>(1u << bit);
      check(std::move(damaged), bytes, "bit " + std::to_string(bit) + " of byte " + std::to_string(byte), tally);
    }
  }
  // Flips in the padding before the segment change nothing; flips in the header, the FlatBuffer's
  // offsets and the weights (deep checksums) must be caught.
  EXPECT_GT(tally.valid, 0u);
  EXPECT_GT(tally.errors[ErrorCode::ChecksumMismatch], 0u);
  EXPECT_GT(tally.errors[ErrorCode::BadMagic], 0u);
  EXPECT_GT(tally.errors[ErrorCode::FlatbufferInvalid], 0u);
  EXPECT_EQ(tally.valid + tally.total_errors(), limit * 8);
  EXPECT_EQ(tally.broken_walks, 0u) << "of " << tally.valid << " verified files:" << examples(tally);
}

// Multi-byte damage single flips cannot make: random values written over 1-4 random bytes of the
// header and FlatBuffer (union tags, enum bytes, offsets), with a fixed seed.
TEST(Robustness, RandomByteOverwritesAreRejectedOrSafe) {
  const auto bytes = sample_bytes();
  ASSERT_FALSE(bytes.empty());
  const size_t fb_end = flatbuffer_end(bytes);
  ASSERT_LT(fb_end, bytes.size());
  std::mt19937_64 rng(20240601);
  Tally tally;
  for (int trial = 0; trial < 20000; ++trial) {
    auto damaged = bytes;
    const int writes = 1 + static_cast<int>(rng() % 4);
    std::string what = "trial " + std::to_string(trial) + ":";
    for (int w = 0; w < writes; ++w) {
      const size_t at = rng() % fb_end;
      damaged[at] = static_cast<uint8_t>(rng());
      what += " [" + std::to_string(at) + "]=" + std::to_string(damaged[at]);
    }
    check(std::move(damaged), bytes, what, tally);
  }
  EXPECT_GT(tally.valid, 0u);
  EXPECT_GT(tally.total_errors(), 0u);
  EXPECT_EQ(tally.broken_walks, 0u) << "of " << tally.valid << " verified files:" << examples(tally);
}

}  // namespace
}  // namespace nrt
