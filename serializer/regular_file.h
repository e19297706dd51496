// Opening the files a tool reads from someone else (programs, archives, .npy inputs, expected
// outputs, kernel libraries). Only regular files are read: a FIFO blocks open() or read() until
// a writer comes, a device such as /dev/zero never ends, a directory or socket holds no data.
// The path is opened with O_NONBLOCK (so even a FIFO cannot block the open), checked with
// fstat, and only then switched back to blocking reads; the size fstat gives bounds every read.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "core/error.h"

namespace nrt {

// An open file descriptor, closed with its owner.
class FileDescriptor {
 public:
  FileDescriptor() = default;
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(FileDescriptor&& other) noexcept : fd_(other.release()) {}
  FileDescriptor& operator=(FileDescriptor&& other) noexcept;
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor();

  int get() const { return fd_; }
  int release() {
    const int fd = fd_;
    fd_ = -1;
    return fd;
  }

 private:
  int fd_ = -1;
};

struct RegularFile {
  FileDescriptor fd;
  uint64_t size = 0;
  mode_t mode = 0;
};

// "a FIFO", "a directory", "a character device", ... for an fstat mode.
std::string file_kind_name(mode_t mode);

// Opens `path` for reading; anything but a regular file is an IoOpen error naming what it is.
Result<RegularFile> open_regular_file(const std::string& path);

// A read-only mapping of a whole regular file (empty files map to no bytes). Pages are read
// only when touched.
class MappedFile {
 public:
  static Result<std::shared_ptr<const MappedFile>> open(const std::string& path);
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  std::span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(address_), size_}; }

 private:
  MappedFile(void* address, size_t size) : address_(address), size_(size) {}
  void* address_ = nullptr;
  size_t size_ = 0;
};

}  // namespace nrt
