#include "serializer/temporary_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "serializer/signal_cleanup.h"

namespace nrt {

Result<TemporaryFile> TemporaryFile::create(const std::string& suffix) {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = std::string(dir != nullptr && *dir != '\0' ? dir : "/tmp") + "/nrt-XXXXXX" + suffix;
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkostemps(name.data(), static_cast<int>(suffix.size()), O_CLOEXEC);  // mode 0600
  if (fd < 0) {
    return make_error(ErrorCode::IoWrite, "cannot create a temporary file '" + pattern + "': " + std::strerror(errno));
  }
  std::string path(name.data());
  return TemporaryFile(path, fd, register_temporary_file(path));
}

TemporaryFile::TemporaryFile(TemporaryFile&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), cleanup_(other.cleanup_) {
  other.fd_ = -1;
  other.cleanup_ = -1;
  other.path_.clear();
}

TemporaryFile::~TemporaryFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!path_.empty()) ::unlink(path_.c_str());
  if (cleanup_ >= 0) unregister_temporary_file(cleanup_);
}

Status TemporaryFile::write(std::span<const uint8_t> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return make_error(ErrorCode::IoWrite, "cannot write '" + path_ + "': " + std::strerror(errno));
    bytes = bytes.subspan(static_cast<size_t>(n));
  }
  return Status::Ok();
}

}  // namespace nrt
