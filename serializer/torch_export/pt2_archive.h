// The zip layer of a .pt2 archive (libzip). Reading: every entry sits under one root folder,
// taken from the first entry's first path component as torch does; entries are looked up by
// their name below the root. A name that is absolute, empty, holds "." or ".." components or
// lies outside the root folder makes the archive corrupt. Sizes are checked before anything is
// allocated: an entry may not declare more bytes than the archive could hold (stored entries:
// no more than the file; compressed ones: no more than the deflate ratio allows), names are
// unique, and reads stop at what the caller needs, return exactly the declared size and check
// the CRC when they read a whole entry. Writing: entries uncompressed, each record's data
// 64-byte aligned in the file (padding in an "FB" local extra field, as PyTorch's writer does),
// fixed timestamps, so the same program gives the same bytes.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.h"

namespace nrt::torch_export {

inline constexpr uint64_t kPt2RecordAlignment = 64;

class Pt2Reader {
 public:
  static Result<Pt2Reader> open(const std::string& path);
  static Result<Pt2Reader> from_bytes(std::vector<uint8_t> bytes);
  Pt2Reader(Pt2Reader&&) noexcept;
  Pt2Reader& operator=(Pt2Reader&&) noexcept;
  ~Pt2Reader();

  const std::string& root() const { return root_; }
  // Names below the root, in archive order (entries outside the root are not listed).
  const std::vector<std::string>& names() const { return names_; }
  // Every entry name as stored, root included (for recognising other archive layouts).
  const std::vector<std::string>& raw_names() const { return raw_names_; }
  bool has(std::string_view name) const;
  Result<uint64_t> size(std::string_view name) const;
  // The whole entry; fails if it is larger than `max_bytes`.
  Result<std::vector<uint8_t>> read(std::string_view name, uint64_t max_bytes = UINT64_MAX) const;
  Result<std::string> read_text(std::string_view name, uint64_t max_bytes = UINT64_MAX) const;
  // At most the first `count` bytes of the entry: inflation stops there. The CRC is checked only
  // when that is the whole entry.
  Result<std::vector<uint8_t>> read_prefix(std::string_view name, uint64_t count) const;

 private:
  struct State;
  explicit Pt2Reader(std::unique_ptr<State> state);
  static Result<Pt2Reader> index(std::unique_ptr<State> state);
  Result<std::vector<uint8_t>> read_bytes(std::string_view name, uint64_t count) const;

  std::unique_ptr<State> state_;
  std::string root_;
  std::vector<std::string> names_;
  std::vector<std::string> raw_names_;
};

struct Pt2Entry {
  std::string name;  // below the root
  std::span<const uint8_t> bytes;
};

// The archive's bytes: every entry under `root`/, in order.
Result<std::vector<uint8_t>> write_pt2_archive(const std::string& root, std::span<const Pt2Entry> entries);

// Checks that every entry of a zip is stored uncompressed with its data at a multiple of
// kPt2RecordAlignment; returns the first entry that is not. For tests of the writer.
Status check_record_alignment(std::span<const uint8_t> zip_bytes);

}  // namespace nrt::torch_export
