// Writes the tests' sample program (sample_program.h) to the path given, to regenerate
// golden/sample.print.txt:
//   bazel run //tests/cli:write_sample_program -- /tmp/sample.nrt
//   bazel-bin/cli/nrt-inspect print /tmp/sample.nrt > tests/cli/golden/sample.print.txt
#include <cstdio>

#include "tests/cli/sample_program.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample_program OUT.nrt\n");
    return 2;
  }
  if (nrt::Status status = nrt::testing::write_program(argv[1], nrt::testing::sample_program()); !status) {
    std::fprintf(stderr, "%s\n", status.error().to_string().c_str());
    return 1;
  }
  return 0;
}
