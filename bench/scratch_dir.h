// A private directory for a benchmark's files, removed with everything in it when the object
// dies. Created under $TEST_TMPDIR when Bazel sets it, else $TMPDIR, else /tmp.
#pragma once

#include <string>

namespace nrt::bench {

class ScratchDir {
 public:
  // `tag` becomes part of the directory name; creation failure leaves path() empty.
  explicit ScratchDir(const std::string& tag);
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::string& path() const { return path_; }
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

}  // namespace nrt::bench
