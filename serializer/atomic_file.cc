#include "serializer/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

namespace nrt {

Result<AtomicFile> AtomicFile::create(const std::string& path) {
  std::string temp = path + ".tmp.XXXXXX";
  std::vector<char> name(temp.begin(), temp.end());
  name.push_back('\0');
  int fd = mkstemp(name.data());
  if (fd < 0) {
    return make_error(ErrorCode::IoWrite, "cannot create a temporary file next to '" + path + "': " + std::strerror(errno));
  }
  fchmod(fd, 0644);
  return AtomicFile(path, std::string(name.data()), fd);
}

AtomicFile::AtomicFile(AtomicFile&& other) noexcept
    : path_(std::move(other.path_)), temp_path_(std::move(other.temp_path_)), fd_(other.fd_) {
  other.fd_ = -1;
  other.temp_path_.clear();
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_path_.empty()) ::unlink(temp_path_.c_str());
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
  if (::fsync(fd_) != 0) {
    return make_error(ErrorCode::IoWrite, "cannot flush '" + temp_path_ + "': " + std::strerror(errno));
  }
  ::close(fd_);
  fd_ = -1;
  if (std::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return make_error(ErrorCode::IoWrite, "cannot rename '" + temp_path_ + "' to '" + path_ + "': " + std::strerror(errno));
  }
  temp_path_.clear();
  return {};
}

Status write_file_atomically(const std::string& path, std::span<const uint8_t> bytes) {
  auto file = AtomicFile::create(path);
  if (!file) return file.error();
  if (Status s = file->write(bytes); !s) return s;
  return file->commit();
}

}  // namespace nrt
