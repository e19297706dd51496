// Runs a program the way a user would, for the CLI tests: argv, stdout and stderr captured
// through files (so the child sees no terminal), the exit status.
#pragma once

#include <string>
#include <vector>

namespace nrt::testing {

struct ProcessResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;
  std::string err;
};

ProcessResult run_process(const std::vector<std::string>& argv);

}  // namespace nrt::testing
