#include "serializer/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace nrt {

Result<std::string> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(ErrorCode::IoOpen, "cannot open '" + path + "': " + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) return make_error(ErrorCode::IoOpen, "cannot read '" + path + "'");
  return buffer.str();
}

}  // namespace nrt
