#include "train/interrupt.h"

#include <atomic>
#include <csignal>

namespace maskprior::training {

namespace {

std::atomic<int> g_signal{0};  // NOLINT: written only by the signal handler
int g_depth = 0;               // NOLINT: scopes open now (one thread installs them)
static_assert(std::atomic<int>::is_always_lock_free,
              "the handler may only touch lock-free atomics");

extern "C" void on_stop_signal(int sig) {
  g_signal.store(sig);
  std::signal(sig, SIG_DFL);  // a second signal of the same kind ends the process at once
}

}  // namespace

InterruptScope::InterruptScope() {
  if (g_depth++ == 0) g_signal.store(0);  // an inner scope keeps a signal that is pending
  previous_int_ = std::signal(SIGINT, on_stop_signal);
  previous_term_ = std::signal(SIGTERM, on_stop_signal);
}

InterruptScope::~InterruptScope() {
  --g_depth;
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
}

int InterruptScope::stop_signal() {
  return g_signal.load();
}

}  // namespace maskprior::training
