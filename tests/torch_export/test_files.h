// Where the torch.export tests find their inputs, and small helpers over them.
//
// The conformance programs (real torch.export output) live outside the repository, in
// ../shared/conformance; scripts/test_all.sh passes their absolute path in NRT_CONFORMANCE_DIR.
// Without it the tests fall back to /work/shared/conformance. A missing directory fails the
// tests that need it (CI has it): it is never a silent skip.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace nrt::test {

// The conformance directory, or "" when neither NRT_CONFORMANCE_DIR nor the fallback exists.
std::string conformance_dir();

// testdata/torch/ inside the test's runfiles (the torch corpus), or "" when absent.
std::string torch_corpus_dir();
// testdata/ inside the test's runfiles (nrt's compatibility corpus), or "" when absent.
std::string nrt_corpus_dir();

std::string read_text(const std::string& path);
std::vector<uint8_t> read_bytes(const std::string& path);
void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes);

// A fresh directory under TEST_TMPDIR (or /tmp) for files a test writes.
std::string scratch_dir(const std::string& name);

// Entries of directory `dir` (names only, sorted).
std::vector<std::string> list_dir(const std::string& dir);

}  // namespace nrt::test
