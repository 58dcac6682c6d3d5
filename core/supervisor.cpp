#include "core/supervisor.h"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <iostream>

#include "core/error.h"

namespace maskprior {

namespace {

// Signals that arrived and are not yet passed on. The handler only counts; the supervisor's loop
// passes them on to the children it has not reaped yet, so a signal never reaches a process that
// took over the pid of a child already reaped.
std::atomic<int> g_pending_int{0};   // NOLINT: written by the signal handler
std::atomic<int> g_pending_term{0};  // NOLINT: written by the signal handler
static_assert(std::atomic<int>::is_always_lock_free,
              "the handler may only touch lock-free atomics");

extern "C" void on_supervised_signal(int sig) {
  (sig == SIGINT ? g_pending_int : g_pending_term).fetch_add(1);
}

/// The supervisor's SIGINT and SIGTERM handlers for its lifetime; the previous ones after. No
/// SA_RESTART: a signal cuts the loop's sleep short, so it is passed on at once.
class SignalScope {
 public:
  SignalScope() {
    g_pending_int.store(0);
    g_pending_term.store(0);
    struct sigaction action {};
    action.sa_handler = on_supervised_signal;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGINT, &action, &old_int_);
    ::sigaction(SIGTERM, &action, &old_term_);
  }
  ~SignalScope() {
    ::sigaction(SIGINT, &old_int_, nullptr);
    ::sigaction(SIGTERM, &old_term_, nullptr);
  }
  SignalScope(const SignalScope&) = delete;
  SignalScope& operator=(const SignalScope&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

/// A wait status as a shell reports it. waitpid without WUNTRACED reports only ended children:
/// by exit (the code) or by a signal (128 + it).
int shell_status(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

/// In the child: default signal handling (a training run installs its own), SIGTERM when the
/// supervisor dies (however it dies: a `kill -9`'d sweep leaves no run training as an orphan), its
/// own process group if asked, the work, then exit without the parent's atexit handlers or static
/// destructors.
[[noreturn]] void child_main(const ChildProcess& child, bool own_process_group, pid_t parent) {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  if (own_process_group) ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The supervisor died before prctl: end as the SIGTERM prctl promises would have.
  if (::getppid() != parent) ::_exit(128 + SIGTERM);
  int status = 1;
  try {
    status = child.work();
  } catch (const std::exception& e) {
    std::cerr << fmt::format("error in {}: {}\n", child.label, e.what());
  } catch (...) {
    std::cerr << fmt::format("error in {}\n", child.label);
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(status);
}

struct Running {
  pid_t pid = 0;
  size_t child = 0;
};

class Supervisor {
 public:
  Supervisor(const std::vector<ChildProcess>& children, const SuperviseOptions& options)
      : children_(children),
        options_(options),
        parallel_(std::max(1, options.parallel)),
        next_tick_(std::chrono::steady_clock::now() + options.tick_every) {}

  Supervision run() {
    // No child starts after a signal or once the others are being stopped: then the loop ends
    // when the running ones have.
    auto more_to_start = [&] {
      return result_.signal == 0 && !stopping_ && next_ < children_.size();
    };
    while (more_to_start() || !running_.empty()) {
      pass_on(SIGINT, g_pending_int);
      pass_on(SIGTERM, g_pending_term);
      while (more_to_start() && running_.size() < static_cast<size_t>(parallel_)) start_next();
      const bool ended = reap();
      if (std::chrono::steady_clock::now() >= kill_at_) {
        for (const Running& r : running_) ::kill(r.pid, SIGKILL);
        kill_at_ = std::chrono::steady_clock::time_point::max();
      }
      tick();
      if (!ended && !running_.empty()) {
        const timespec poll{0, 20'000'000};  // 20 ms; a signal ends it early
        ::nanosleep(&poll, nullptr);
      }
    }
    return std::move(result_);
  }

 private:
  /// options_.on_tick with the running children, once tick_every has passed since the last call
  /// (or the start).
  void tick() {
    if (!options_.on_tick || options_.tick_every.count() <= 0 || running_.empty()) return;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_tick_) return;
    next_tick_ = now + options_.tick_every;
    std::vector<size_t> running;
    for (const Running& r : running_) running.push_back(r.child);
    options_.on_tick(running);
  }

  void pass_on(int sig, std::atomic<int>& pending) {
    for (int n = pending.exchange(0); n > 0; --n) {
      result_.signal = sig;
      for (const Running& r : running_) ::kill(r.pid, sig);
    }
  }

  void start_next() {
    const ChildProcess& child = children_[next_];
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);  // or the child would write the parent's buffered output again
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int error = errno;
      throw InputError(options_.cannot_start ? options_.cannot_start(child, error)
                                             : fmt::format("cannot start a process for {}: {}",
                                                           child.label, std::strerror(error)));
    }
    if (pid == 0) child_main(child, options_.own_process_group, parent);
    running_.push_back({pid, next_++});
  }

  /// Reaps the children that have ended, in start order; true if any had.
  bool reap() {
    bool ended = false;
    for (auto it = running_.begin(); it != running_.end();) {
      int status = 0;
      const pid_t done = ::waitpid(it->pid, &status, WNOHANG);
      if (done == 0 || (done < 0 && errno == EINTR)) {
        ++it;
        continue;
      }
      if (done < 0) {
        throw InternalError(fmt::format("[supervise] child process {} of {} is gone: {}", it->pid,
                                        children_[it->child].label, std::strerror(errno)));
      }
      const ChildExit exit{it->child, shell_status(status), result_.signal};
      it = running_.erase(it);
      result_.exits.push_back(exit);
      ended = true;
      if (exit.status != 0 && !failed_) {
        failed_ = true;
        if (options_.stop_others_on_failure && exit.signal == 0 && !is_stop_status(exit.status)) {
          stop_others(exit);
        }
      }
    }
    return ended;
  }

  void stop_others(const ChildExit& failure) {
    if (options_.on_stopping_others) options_.on_stopping_others(failure);
    stopping_ = true;
    for (const Running& r : running_) ::kill(r.pid, SIGTERM);
    kill_at_ = std::chrono::steady_clock::now() + *options_.stop_others_on_failure;
  }

  const std::vector<ChildProcess>& children_;
  const SuperviseOptions& options_;
  const int parallel_;
  std::vector<Running> running_;
  size_t next_ = 0;
  bool failed_ = false;    // a child has failed
  bool stopping_ = false;  // the others are being stopped
  std::chrono::steady_clock::time_point kill_at_ = std::chrono::steady_clock::time_point::max();
  std::chrono::steady_clock::time_point next_tick_;  // when on_tick is due
  Supervision result_;
};

}  // namespace

const ChildExit* Supervision::first_failure() const {
  const auto it =
      std::find_if(exits.begin(), exits.end(), [](const ChildExit& e) { return e.status != 0; });
  return it == exits.end() ? nullptr : &*it;
}

Supervision supervise(const std::vector<ChildProcess>& children, const SuperviseOptions& options) {
  const SignalScope signals;
  return Supervisor(children, options).run();
}

bool is_stop_status(int status) {
  return status == 128 + SIGINT || status == 128 + SIGTERM;
}

}  // namespace maskprior
