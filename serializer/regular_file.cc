#include "serializer/regular_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace nrt {

FileDescriptor& FileDescriptor::operator=(FileDescriptor&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.release();
  }
  return *this;
}

FileDescriptor::~FileDescriptor() {
  if (fd_ >= 0) ::close(fd_);
}

std::string file_kind_name(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISLNK(mode)) return "a symbolic link";
  return "not a regular file";
}

Result<RegularFile> open_regular_file(const std::string& path) {
  RegularFile file;
  file.fd = FileDescriptor(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  struct stat st {};
  if (file.fd.get() < 0) {
    const int err = errno;
    // open() itself refuses some kinds (a socket: ENXIO): say what the path is, not "no device".
    if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      return make_error(ErrorCode::IoOpen, "'" + path + "' is " + file_kind_name(st.st_mode) +
                                               ", not a regular file; nrt reads only regular files");
    }
    return make_error(ErrorCode::IoOpen, "cannot open '" + path + "': " + std::strerror(err));
  }
  if (::fstat(file.fd.get(), &st) != 0) {
    return make_error(ErrorCode::IoOpen, "cannot stat '" + path + "': " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    return make_error(ErrorCode::IoOpen, "'" + path + "' is " + file_kind_name(st.st_mode) +
                                             ", not a regular file; nrt reads only regular files");
  }
  const int flags = ::fcntl(file.fd.get(), F_GETFL);
  if (flags < 0 || ::fcntl(file.fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
    return make_error(ErrorCode::IoOpen, "cannot read '" + path + "': " + std::strerror(errno));
  }
  file.size = static_cast<uint64_t>(st.st_size);
  file.mode = st.st_mode;
  return file;
}

Result<std::shared_ptr<const MappedFile>> MappedFile::open(const std::string& path) {
  NRT_TRY(file, open_regular_file(path));
  if (file->size > SIZE_MAX) return make_error(ErrorCode::IoOpen, "'" + path + "' is too large to map");
  const auto size = static_cast<size_t>(file->size);
  if (size == 0) return std::shared_ptr<const MappedFile>(new MappedFile(nullptr, 0));
  void* address = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, file->fd.get(), 0);
  if (address == MAP_FAILED) return make_error(ErrorCode::IoOpen, "cannot map '" + path + "': " + std::strerror(errno));
  return std::shared_ptr<const MappedFile>(new MappedFile(address, size));
}

MappedFile::~MappedFile() {
  if (address_ != nullptr && size_ != 0) ::munmap(address_, size_);
}

}  // namespace nrt
