// Reads a whole (small) regular file, or its first bytes, into memory, with an IoOpen error
// naming the path. Only regular files (serializer/regular_file.h); never more than the file's
// size, nor more than `max_bytes`.
#pragma once

#include <cstdint>
#include <string>

#include "core/error.h"

namespace nrt {

Result<std::string> read_file(const std::string& path, uint64_t max_bytes = UINT64_MAX);
// At most the first `count` bytes.
Result<std::string> read_file_head(const std::string& path, size_t count);

}  // namespace nrt
