// An opened, verified .nrt file. `open` maps the file, checks the container header, runs the
// FlatBuffers verifier (bounded depth and table count) and nrt's own checks (verify_program.h);
// only then does it hand out the Program. Weight bytes are never read by opening: storage_bytes()
// returns a zero-copy view into the mapping.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "schema/nrt_generated.h"
#include "serializer/container.h"
#include "core/error.h"
#include "serializer/verify_options.h"

namespace nrt {

class ProgramFile {
 public:
  // Maps `path` read-only and verifies it.
  static Result<ProgramFile> open(const std::string& path, const VerifyOptions& options = {});
  // Verifies bytes already in memory (tests, fuzzing, JSON conversion). The bytes are kept.
  static Result<ProgramFile> from_bytes(std::vector<uint8_t> bytes, const VerifyOptions& options = {});

  // The same file with its Program replaced by `program` (a rewrite of it: the sharding pass's
  // program for one rank), verified as open() verifies; storages stay the original's bytes (no
  // copy), so `program` must keep the original's storage table.
  static Result<ProgramFile> with_program(const ProgramFile& original, const fb::ProgramT& program,
                                          const VerifyOptions& options = {});

  // Verifies the file's bytes again with `options` (deep: every storage's checksum, reading all
  // weights), as open() would have.
  Status check(const VerifyOptions& options) const;

  const fb::Program& program() const { return *program_; }
  const ContainerLayout& layout() const { return layout_; }
  // The container's bytes; for a with_program file, the original's (its Program is elsewhere).
  std::span<const uint8_t> file_bytes() const { return bytes_; }
  // Made by with_program: file_bytes() does not hold program().
  bool rewritten() const { return rewritten_ != nullptr; }
  // Opened from a path: file_bytes() are a read-only mapping of the file, whose pages the process
  // may drop and read back from the file (Storage::borrow_file_mapping). From bytes: not.
  bool mapped() const { return mapped_; }
  std::span<const uint8_t> flatbuffer_bytes() const;
  // Bytes of storage `index` (checked in range by verification).
  std::span<const uint8_t> storage_bytes(uint32_t index) const;

 private:
  static Result<ProgramFile> verify(std::shared_ptr<const void> owner, std::span<const uint8_t> bytes,
                                    const VerifyOptions& options);

  std::shared_ptr<const void> owner_;  // the mapping or the vector behind bytes_
  std::shared_ptr<const std::vector<uint8_t>> rewritten_;  // with_program: the Program's own bytes
  std::span<const uint8_t> bytes_;
  ContainerLayout layout_;
  const fb::Program* program_ = nullptr;
  bool mapped_ = false;
};


}  // namespace nrt
