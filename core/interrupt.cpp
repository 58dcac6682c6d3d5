#include "core/interrupt.h"

#include <fmt/format.h>

#include <atomic>
#include <csignal>

namespace maskprior {
namespace {

std::atomic<int> g_stop_signal{0};  // NOLINT: written by signal handlers, by design
static_assert(std::atomic<int>::is_always_lock_free,
              "a signal handler may only touch lock-free atomics");

}  // namespace

void request_stop(int signal) {
  g_stop_signal.store(signal, std::memory_order_relaxed);
}

void clear_stop_request() {
  g_stop_signal.store(0, std::memory_order_relaxed);
}

int stop_requested() {
  return g_stop_signal.load(std::memory_order_relaxed);
}

std::string signal_name(int signal) {
  if (signal == SIGINT) return "SIGINT";
  if (signal == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", signal);
}

Interrupted::Interrupted(int signal, std::string_view during)
    : std::runtime_error(fmt::format("stopped by {} while {}, before training started",
                                     signal_name(signal), during)),
      signal_(signal) {}

void check_stop_requested(std::string_view during) {
  if (const int signal = stop_requested(); signal != 0) throw Interrupted(signal, during);
}

}  // namespace maskprior
