#include "train/interrupt.h"

#include <csignal>

#include "core/interrupt.h"

namespace maskprior::training {

namespace {

int g_depth = 0;  // NOLINT: scopes open now (one thread installs them)

extern "C" void on_stop_signal(int sig) {
  request_stop(sig);
  std::signal(sig, SIG_DFL);  // a second signal of the same kind ends the process at once
}

}  // namespace

InterruptScope::InterruptScope() {
  if (g_depth++ == 0) clear_stop_request();  // an inner scope keeps a signal that is pending
  previous_int_ = std::signal(SIGINT, on_stop_signal);
  previous_term_ = std::signal(SIGTERM, on_stop_signal);
}

InterruptScope::~InterruptScope() {
  std::signal(SIGINT, previous_int_);
  std::signal(SIGTERM, previous_term_);
  // The outermost scope's request has been answered: work polled after it (a --resume hashing
  // its files in the same process) must not see it.
  if (--g_depth == 0) clear_stop_request();
}

int InterruptScope::stop_signal() {
  return stop_requested();
}

}  // namespace maskprior::training
