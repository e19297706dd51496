// A data file of a Bazel test by its workspace path (testdata/mlp.nrt), inside the test's
// runfiles; the path itself when run outside Bazel.
#pragma once

#include <cstdlib>
#include <string>

namespace nrt::testing {

inline std::string runfile(const std::string& path) {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir == nullptr || workspace == nullptr) return path;
  return std::string(srcdir) + "/" + workspace + "/" + path;
}

}  // namespace nrt::testing
