#include "serializer/signal_cleanup.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>

namespace nrt {
namespace {

// Fixed storage: the handler may not allocate or lock. A slot is published (kReady) only after
// its path is written, and taken back (kFree) before its owner reuses the name.
enum SlotState : int { kFree = 0, kWriting = 1, kReady = 2 };
constexpr int kSlots = 64;
constexpr size_t kPathBytes = 4096;

struct Slot {
  std::atomic<int> state{kFree};
  std::atomic<uint64_t> generation{0};  // changes whenever the slot is claimed anew
  char path[kPathBytes];
};

Slot g_slots[kSlots];
constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_previous[sizeof kSignals / sizeof kSignals[0]];
bool g_installed[sizeof kSignals / sizeof kSignals[0]];

void remove_temporary_files(int signal_number) {
  const int saved_errno = errno;
  // Another thread may free and reclaim a slot meanwhile: the path is copied, and unlinked only
  // if the slot still held it, unchanged, once the copy was complete.
  static char path[kPathBytes];
  for (Slot& slot : g_slots) {
    if (slot.state.load(std::memory_order_acquire) != kReady) continue;
    const uint64_t generation = slot.generation.load(std::memory_order_acquire);
    std::memcpy(path, slot.path, kPathBytes);
    path[kPathBytes - 1] = '\0';
    if (slot.state.load(std::memory_order_acquire) == kReady &&
        slot.generation.load(std::memory_order_acquire) == generation) {
      ::unlink(path);
    }
  }
  errno = saved_errno;
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    if (kSignals[i] != signal_number || !g_installed[i]) continue;
    ::sigaction(signal_number, &g_previous[i], nullptr);
    ::raise(signal_number);  // delivered once this handler returns: the previous course
  }
}

void install_handlers() {
  for (size_t i = 0; i < sizeof kSignals / sizeof kSignals[0]; ++i) {
    struct sigaction previous {};
    if (::sigaction(kSignals[i], nullptr, &previous) != 0) continue;
    if (!(previous.sa_flags & SA_SIGINFO) && previous.sa_handler == SIG_IGN) continue;
    struct sigaction action {};
    action.sa_handler = remove_temporary_files;
    action.sa_flags = SA_RESTART;  // a chained handler that returns resumes fsync/rename
    sigemptyset(&action.sa_mask);
    for (int other : kSignals) sigaddset(&action.sa_mask, other);
    g_previous[i] = previous;
    g_installed[i] = ::sigaction(kSignals[i], &action, nullptr) == 0;
  }
}

}  // namespace

int register_temporary_file(const std::string& path) {
  static std::once_flag once;
  std::call_once(once, install_handlers);
  if (path.size() >= kPathBytes) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_slots[i].state.compare_exchange_strong(expected, kWriting, std::memory_order_acq_rel)) continue;
    g_slots[i].generation.fetch_add(1, std::memory_order_acq_rel);
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(kReady, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary_file(int handle) {
  if (handle >= 0 && handle < kSlots) g_slots[handle].state.store(kFree, std::memory_order_release);
}

}  // namespace nrt
