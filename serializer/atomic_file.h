// Writes a file so that readers see either the old file or the complete new one, never half of
// it: a temporary file in the same directory, written, flushed (fsync) and renamed over `path`.
// If commit() is never reached, the destructor removes the temporary file, and so does SIGINT,
// SIGTERM or SIGHUP meanwhile (serializer/signal_cleanup.h). Only a regular file (or a new
// path) is replaced, and a replaced file keeps its permission bits; a new one gets 0666 less
// the umask, like any file a program creates.
//
// OnSignal::kKeepTemporary opts a write out of that removal: a write that a signal's own handler
// completes (a flight-recorder dump while SIGTERM asks for the same dump) must not lose its
// temporary file under the rename. Such a temporary outlives only a SIGKILL, as any would.
//
// Durability::kSkipFsync opts a write out of the fsync: the rename is as atomic for every reader
// and the file survives the writer's death, but a power loss may lose it. A flight-recorder dump
// takes it: ext4's fsync of even a 700-byte file waits for other files' dirty data (measured here:
// up to 4.6 s beside one dd, over 60 s beside a Bazel build), and a rank's dump must not hold its
// job past the collective timeout it reports.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/error.h"

namespace nrt {

enum class OnSignal { kRemoveTemporary, kKeepTemporary };
enum class Durability { kFsync, kSkipFsync };

class AtomicFile {
 public:
  static Result<AtomicFile> create(const std::string& path, OnSignal on_signal = OnSignal::kRemoveTemporary,
                                   Durability durability = Durability::kFsync);
  AtomicFile(AtomicFile&& other) noexcept;
  AtomicFile& operator=(AtomicFile&&) = delete;
  AtomicFile(const AtomicFile&) = delete;
  ~AtomicFile();

  Status write(std::span<const uint8_t> bytes);
  Status commit();

 private:
  AtomicFile(std::string path, std::string temp_path, int fd, int cleanup, Durability durability)
      : path_(std::move(path)), temp_path_(std::move(temp_path)), fd_(fd), cleanup_(cleanup), durability_(durability) {}
  std::string path_;
  std::string temp_path_;
  int fd_ = -1;
  int cleanup_ = -1;  // signal_cleanup handle
  Durability durability_ = Durability::kFsync;
};

// Convenience: the whole file from one buffer.
Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes,
                             OnSignal on_signal = OnSignal::kRemoveTemporary,
                             Durability durability = Durability::kFsync);

}  // namespace nrt
