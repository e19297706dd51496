#include "serializer/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>

#include "serializer/regular_file.h"
#include "serializer/signal_cleanup.h"

namespace nrt {
namespace {

// A new file next to `path` that no one else has: O_EXCL with a random suffix. Created with
// mode 0666 so that the umask applies as it would to any new file.
int create_temporary(const std::string& path, std::string* temp) {
  static constexpr char kLetters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()) ^
                  static_cast<uint64_t>(::getpid()) << 32;
  try {
    seed ^= std::random_device{}();
  } catch (const std::exception&) {
    // No entropy source: the clock and the pid still differ between writers, and O_EXCL decides.
  }
  std::mt19937_64 random(seed);
  for (int attempt = 0; attempt < 100; ++attempt) {
    *temp = path + ".tmp.";
    for (int i = 0; i < 6; ++i) *temp += kLetters[random() % (sizeof kLetters - 1)];
    const int fd = ::open(temp->c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

}  // namespace

Result<AtomicFile> AtomicFile::create(const std::string& path, OnSignal on_signal, Durability durability) {
  // Only a regular file is replaced: renaming over a FIFO or a device (/dev/null as root) would
  // destroy it. A replaced file keeps its permission bits.
  struct stat target {};
  const bool exists = ::stat(path.c_str(), &target) == 0;
  if (!exists && errno != ENOENT) {
    return make_error(ErrorCode::IoWrite, "cannot write '" + path + "': " + std::strerror(errno));
  }
  if (exists && !S_ISREG(target.st_mode)) {
    return make_error(ErrorCode::IoWrite, "'" + path + "' is " + file_kind_name(target.st_mode) +
                                              "; nrt writes only to a regular file or a new path");
  }
  std::string temp;
  const int fd = create_temporary(path, &temp);
  if (fd < 0) {
    return make_error(ErrorCode::IoWrite, "cannot create a temporary file next to '" + path + "': " + std::strerror(errno));
  }
  const int cleanup = on_signal == OnSignal::kRemoveTemporary ? register_temporary_file(temp) : -1;
  if (exists && ::fchmod(fd, target.st_mode & 07777) != 0) {
    const int err = errno;
    unregister_temporary_file(cleanup);
    ::close(fd);
    ::unlink(temp.c_str());
    return make_error(ErrorCode::IoWrite, "cannot give '" + temp + "' the mode of '" + path + "': " + std::strerror(err));
  }
  return AtomicFile(path, std::move(temp), fd, cleanup, durability);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)),
      temp_path_(std::move(other.temp_path_)),
      fd_(other.fd_),
      cleanup_(other.cleanup_),
      durability_(other.durability_) {
  other.fd_ = -1;
  other.cleanup_ = -1;
  other.temp_path_.clear();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
  unregister_temporary_file(cleanup_);
}

Status AtomicFile::write(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return make_error(ErrorCode::IoWrite, "cannot write '" + temp_path_ + "': " + std::strerror(errno));
    }
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return {};
}

Status AtomicFile::commit() {
  if (durability_ == Durability::kFsync && ::fsync(fd_) != 0) {
    return make_error(ErrorCode::IoWrite, "cannot flush '" + temp_path_ + "': " + std::strerror(errno));
  }
  ::close(fd_);
  fd_ = -1;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return make_error(ErrorCode::IoWrite, "cannot rename '" + temp_path_ + "' to '" + path_ + "': " + std::strerror(errno));
  }
  unregister_temporary_file(cleanup_);
  cleanup_ = -1;
  temp_path_.clear();
  return {};
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes, OnSignal on_signal,
                             Durability durability) {
  NRT_TRY(file, AtomicFile::create(path, on_signal, durability));
  NRT_RETURN_IF_ERROR(file->write(bytes));
  return file->commit();
}

}  // namespace nrt
