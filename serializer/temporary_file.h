// A private temporary file (mode 0600, in $TMPDIR or /tmp) that is removed when it goes away, and
// on SIGINT, SIGTERM or SIGHUP meanwhile (serializer/signal_cleanup.h): for handing bytes held
// in memory to code that reads paths (open_program_bytes and the importers).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "core/error.h"

namespace nrt {

class TemporaryFile {
 public:
  // `suffix` ends the name (".pt2"): some readers look at it.
  static Result<TemporaryFile> create(const std::string& suffix);
  TemporaryFile(TemporaryFile&& other) noexcept;
  TemporaryFile& operator=(TemporaryFile&&) = delete;
  TemporaryFile(const TemporaryFile&) = delete;
  ~TemporaryFile();

  const std::string& path() const { return path_; }
  // Appends `bytes` and flushes them to the file (not to the disk: nothing outlives the process).
  Status write(std::span<const uint8_t> bytes);

 private:
  TemporaryFile(std::string path, int fd, int cleanup) : path_(std::move(path)), fd_(fd), cleanup_(cleanup) {}
  std::string path_;
  int fd_ = -1;
  int cleanup_ = -1;  // signal_cleanup handle
};

}  // namespace nrt
