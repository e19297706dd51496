#include "tests/torch_export/test_files.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nrt::test {

namespace fs = std::filesystem;

std::string conformance_dir() {
  if (const char* env = std::getenv("NRT_CONFORMANCE_DIR"); env != nullptr && *env != '\0') {
    return fs::is_directory(env) ? std::string(env) : std::string();
  }
  const char* fallback = "/work/shared/conformance";
  return fs::is_directory(fallback) ? std::string(fallback) : std::string();
}

namespace {

std::string runfiles_dir(const std::string& relative) {
  const char* workspace = std::getenv("TEST_WORKSPACE");
  for (const char* root : {std::getenv("TEST_SRCDIR"), std::getenv("RUNFILES_DIR")}) {
    if (root == nullptr) continue;
    const fs::path dir = fs::path(root) / (workspace != nullptr ? workspace : "nrt") / relative;
    if (fs::is_directory(dir)) return dir.string();
  }
  return fs::is_directory(relative) ? relative : std::string();
}

}  // namespace

std::string torch_corpus_dir() { return runfiles_dir("testdata/torch"); }
std::string nrt_corpus_dir() { return runfiles_dir("testdata"); }

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// One read of the whole file, not a byte at a time through stream iterators: the ASan tree builds
// tests at -O0, where those took over a minute for the torch corpus (pt2_test's timeout).
std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  const std::streamoff size = in ? static_cast<std::streamoff>(in.tellg()) : -1;
  if (size <= 0) return {};
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  in.read(reinterpret_cast<char*>(bytes.data()), size);
  bytes.resize(static_cast<size_t>(in.gcount()));
  return bytes;
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::string scratch_dir(const std::string& name) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const fs::path dir = fs::path(tmp != nullptr ? tmp : "/tmp") / ("nrt_torch_" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace nrt::test
