// Runs a program the way a user would and captures what it printed: stdout and stderr to files
// (so the child sees non-terminals), or both to a pseudo-terminal (so it sees a TTY). The child
// gets the parent's environment plus `env` (NAME=VALUE), minus the names in `unset`.
#pragma once

#include <string>
#include <vector>

namespace nrt::testing {

struct CommandResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;     // stdout (under a terminal: stdout and stderr together)
  std::string err;
};

struct CommandEnvironment {
  std::vector<std::string> set;    // NAME=VALUE
  std::vector<std::string> unset;  // NAME
};

CommandResult run_command(const std::vector<std::string>& argv, const CommandEnvironment& env = {});
CommandResult run_command_in_terminal(const std::vector<std::string>& argv, const CommandEnvironment& env = {});

}  // namespace nrt::testing
