#include "session/run_interruption.h"

namespace nrt {
namespace {

volatile std::sig_atomic_t g_signal = 0;

void note_signal(int number) { g_signal = number; }

}  // namespace

RunInterruption::RunInterruption() {
  g_signal = 0;
  struct sigaction watch {};
  watch.sa_handler = &note_signal;
  sigemptyset(&watch.sa_mask);
  watch.sa_flags = SA_RESTART | SA_RESETHAND;  // the run in progress goes on; a second signal acts
  sigaction(SIGINT, &watch, &previous_int_);
  sigaction(SIGTERM, &watch, &previous_term_);
}

RunInterruption::~RunInterruption() {
  sigaction(SIGINT, &previous_int_, nullptr);
  sigaction(SIGTERM, &previous_term_, nullptr);
}

int RunInterruption::signal() const { return g_signal; }

}  // namespace nrt
