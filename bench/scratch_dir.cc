#include "bench/scratch_dir.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <vector>

namespace nrt::bench {

ScratchDir::ScratchDir(const std::string& tag) {
  const char* base = std::getenv("TEST_TMPDIR");
  if (base == nullptr || base[0] == '\0') base = std::getenv("TMPDIR");
  if (base == nullptr || base[0] == '\0') base = "/tmp";
  std::string templ = std::string(base) + "/nrt_" + tag + "_XXXXXX";
  std::vector<char> buffer(templ.begin(), templ.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) != nullptr) path_ = buffer.data();
}

ScratchDir::~ScratchDir() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace nrt::bench
