#include "train/jobs.h"

#include <fmt/format.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>

#include "core/error.h"

namespace maskprior::training {

namespace {

constexpr int kMaxChildren = 1024;
// The running children, for the signal handler (async-signal-safe: a fixed array of pids).
volatile pid_t g_children[kMaxChildren] = {};
volatile std::sig_atomic_t g_signal = 0;

void forward_signal(int signal) {
  g_signal = signal;
  for (int i = 0; i < kMaxChildren; ++i) {
    if (g_children[i] > 0) ::kill(g_children[i], signal);
  }
}

/// In the child: default signal handling (the run installs its own), run, exit without running
/// the parent's atexit handlers or static destructors.
[[noreturn]] void child_main(const Job& job) {
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  int status = 1;
  try {
    status = job.run();
  } catch (const std::exception& e) {
    std::cerr << fmt::format("maskc: error in {}: {}\n", job.label, e.what());
  }
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  ::_exit(status);
}

int free_slot() {
  for (int i = 0; i < kMaxChildren; ++i) {
    if (g_children[i] == 0) return i;
  }
  return -1;
}

}  // namespace

JobsOutcome run_jobs(const std::vector<Job>& jobs, int parallel) {
  parallel = std::max(1, std::min(parallel, kMaxChildren));
  JobsOutcome outcome;
  g_signal = 0;
  auto previous_int = std::signal(SIGINT, forward_signal);
  auto previous_term = std::signal(SIGTERM, forward_signal);
  std::map<pid_t, size_t> running;  // pid -> job index
  size_t next = 0;
  while (next < jobs.size() || !running.empty()) {
    while (g_signal == 0 && next < jobs.size() && static_cast<int>(running.size()) < parallel) {
      std::fflush(nullptr);
      const pid_t pid = ::fork();
      if (pid < 0)
        throw InputError(fmt::format("[jobs] cannot start a process for {}", jobs[next].label));
      if (pid == 0) child_main(jobs[next]);
      g_children[free_slot()] = pid;
      running[pid] = next++;
    }
    int status = 0;
    const pid_t done = ::waitpid(-1, &status, 0);
    if (done < 0) continue;  // interrupted by a signal: loop, the handler passed it on
    auto it = running.find(done);
    if (it == running.end()) continue;
    for (int i = 0; i < kMaxChildren; ++i) {
      if (g_children[i] == done) g_children[i] = 0;
    }
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    // 130 / 143: stopped by SIGINT / SIGTERM with a checkpoint (train/interrupt.h).
    if (code != 0 && !(g_signal != 0 && (code == 130 || code == 143))) {
      outcome.failed.push_back(jobs[it->second].label);
    }
    running.erase(it);
  }
  outcome.interrupted = g_signal != 0;
  std::signal(SIGINT, previous_int);
  std::signal(SIGTERM, previous_term);
  return outcome;
}

}  // namespace maskprior::training
