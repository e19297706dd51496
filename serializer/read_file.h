// Reads a whole (small) file into memory, with an IoOpen error naming the path.
#pragma once

#include <string>

#include "serializer/error.h"

namespace nrt {

Result<std::string> read_file(const std::string& path);

}  // namespace nrt
