#include "tests/cli/command_runner.h"

#include <fcntl.h>
#include <pty.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace nrt::testing {
namespace {

// In the child: adjust the environment and exec; never returns.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, const CommandEnvironment& env) {
  for (const auto& name : env.unset) unsetenv(name.c_str());
  for (const auto& entry : env.set) {
    const auto eq = entry.find('=');
    setenv(entry.substr(0, eq).c_str(), eq == std::string::npos ? "" : entry.substr(eq + 1).c_str(), 1);
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execv(args[0], args.data());
  _exit(127);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string temp_dir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir ? dir : "/tmp";
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const CommandEnvironment& env) {
  static int counter = 0;
  const std::string base = temp_dir() + "/command_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  const std::string out_path = base + ".out";
  const std::string err_path = base + ".err";
  const pid_t pid = fork();
  if (pid == 0) {
    const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    const int in = open("/dev/null", O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(126);
    dup2(in, STDIN_FILENO);
    dup2(out, STDOUT_FILENO);
    dup2(err, STDERR_FILENO);
    exec_child(argv, env);
  }
  CommandResult result;
  if (pid < 0) return result;
  result.exit_code = wait_for(pid);
  result.out = slurp(out_path);
  result.err = slurp(err_path);
  unlink(out_path.c_str());
  unlink(err_path.c_str());
  return result;
}

CommandResult run_command_in_terminal(const std::vector<std::string>& argv, const CommandEnvironment& env) {
  int master = -1;
  const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
  if (pid == 0) exec_child(argv, env);
  CommandResult result;
  if (pid < 0) return result;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(master, buf, sizeof buf);
    if (n > 0) {
      result.out.append(buf, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      break;  // EIO once the child has exited and closed the terminal
    }
  }
  close(master);
  result.exit_code = wait_for(pid);
  return result;
}

}  // namespace nrt::testing
