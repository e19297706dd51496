#include "serializer/read_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "serializer/regular_file.h"

namespace nrt {
namespace {

// Up to `count` bytes from the start of an open file (fewer if it is shorter).
Result<std::string> read_up_to(const RegularFile& file, size_t count, const std::string& path) {
  std::string bytes(count, '\0');
  size_t done = 0;
  while (done < count) {
    const ssize_t n = ::pread(file.fd.get(), bytes.data() + done, count - done, static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return make_error(ErrorCode::IoOpen, "cannot read '" + path + "': " + std::strerror(errno));
    if (n == 0) break;
    done += static_cast<size_t>(n);
  }
  bytes.resize(done);
  return bytes;
}

}  // namespace

Result<std::string> read_file(const std::string& path, uint64_t max_bytes) {
  NRT_TRY(file, open_regular_file(path));
  if (file->size > max_bytes || file->size > SIZE_MAX / 2) {
    return make_error(ErrorCode::IoOpen, "'" + path + "' holds " + std::to_string(file->size) +
                                             " bytes, more than the " + std::to_string(max_bytes) +
                                             " this reader accepts");
  }
  return read_up_to(*file, static_cast<size_t>(file->size), path);
}

Result<std::string> read_file_head(const std::string& path, size_t count) {
  NRT_TRY(file, open_regular_file(path));
  return read_up_to(*file, static_cast<size_t>(std::min<uint64_t>(count, file->size)), path);
}

}  // namespace nrt
