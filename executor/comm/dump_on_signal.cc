#include "executor/comm/dump_on_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>

namespace nrt::exec {
namespace {

int g_pipe[2] = {-1, -1};
std::mutex g_mutex;
std::function<void(const char*)>* g_dump = nullptr;  // leaked on purpose: the thread outlives main
std::chrono::milliseconds g_linger{0};

void on_signal(int signal_number) {
  const unsigned char byte = static_cast<unsigned char>(signal_number);
  const int saved = errno;
  [[maybe_unused]] ssize_t written = write(g_pipe[1], &byte, 1);  // async-signal-safe
  errno = saved;
}

void dump_thread() {
  for (;;) {
    unsigned char byte = 0;
    const ssize_t got = read(g_pipe[0], &byte, 1);
    if (got < 0 && errno == EINTR) continue;
    if (got != 1) return;
    const int signal_number = byte;
    {
      std::lock_guard<std::mutex> lock(g_mutex);
      if (g_dump != nullptr && *g_dump) (*g_dump)(signal_number == SIGTERM ? "SIGTERM" : "SIGUSR1");
    }
    if (signal_number == SIGTERM) {
      std::chrono::milliseconds linger;
      {
        std::lock_guard<std::mutex> lock(g_mutex);
        linger = g_linger;
      }
      std::this_thread::sleep_for(linger);
      // End as SIGTERM would have: default action, raised again.
      struct sigaction fallback {};
      fallback.sa_handler = SIG_DFL;
      sigemptyset(&fallback.sa_mask);
      sigaction(SIGTERM, &fallback, nullptr);
      raise(SIGTERM);
    }
  }
}

}  // namespace

Status dump_on_signals(std::function<void(const char* reason)> dump, std::chrono::milliseconds linger) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_linger = linger;
  if (g_dump != nullptr) {
    *g_dump = std::move(dump);
    return Status::Ok();
  }
  if (pipe(g_pipe) != 0) {
    return make_error(ErrorCode::Internal, std::string("cannot create the signal pipe: ") + std::strerror(errno));
  }
  fcntl(g_pipe[1], F_SETFL, fcntl(g_pipe[1], F_GETFL) | O_NONBLOCK);  // a full pipe never blocks the handler
  g_dump = new std::function<void(const char*)>(std::move(dump));
  std::thread(dump_thread).detach();
  struct sigaction action {};
  action.sa_handler = on_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  for (int signal_number : {SIGTERM, SIGUSR1}) {
    if (sigaction(signal_number, &action, nullptr) != 0) {
      return make_error(ErrorCode::Internal, std::string("cannot install a handler: ") + std::strerror(errno));
    }
  }
  return Status::Ok();
}

}  // namespace nrt::exec
