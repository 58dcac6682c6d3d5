#include "train/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace maskprior::training {

Progress::Progress(bool enabled, int64_t total, int64_t start)
    : enabled_(enabled), tty_(isatty(fileno(stderr)) != 0), total_(total), start_(start) {}

void Progress::begin_steps() {
  begin_ = Clock::now();
}

void Progress::update(int64_t step, double loss) {
  if (!enabled_) return;
  const auto now = Clock::now();
  const bool last = step == total_;
  if (tty_) {
    if (!last && now - last_print_ < std::chrono::milliseconds(200)) return;
    last_print_ = now;
    constexpr int kWidth = 30;
    const int filled = static_cast<int>(kWidth * step / std::max<int64_t>(1, total_));
    std::fprintf(stderr, "\r[%s%s] %lld/%lld last-step loss %.5f ETA %s ",
                 std::string(static_cast<size_t>(filled), '#').c_str(),
                 std::string(static_cast<size_t>(kWidth - filled), '.').c_str(),
                 static_cast<long long>(step), static_cast<long long>(total_), loss,
                 eta(step, now).c_str());
    if (last) std::fprintf(stderr, "\n");
  } else {
    const int64_t every = std::max<int64_t>(1, total_ / 10);
    if (!last && step % every != 0) return;
    std::fprintf(stderr, "step %lld/%lld last-step loss %.5f ETA %s\n",
                 static_cast<long long>(step), static_cast<long long>(total_), loss,
                 eta(step, now).c_str());
  }
  std::fflush(stderr);
}

bool Progress::due(int64_t step) const {
  if (!enabled_) return false;
  if (step == total_) return true;
  if (tty_) return Clock::now() - last_print_ >= std::chrono::milliseconds(200);
  return step % std::max<int64_t>(1, total_ / 10) == 0;
}

void Progress::note(const std::string& line) {
  if (!enabled_) return;
  std::fprintf(stderr, "%s%s\n", tty_ ? "\r\033[K" : "", line.c_str());
}

void Progress::status(const std::string& line) {
  if (!enabled_ || !tty_) return;
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
}

std::string Progress::eta(int64_t step, Clock::time_point now) const {
  const double elapsed = std::chrono::duration<double>(now - begin_).count();
  const double done = static_cast<double>(step - start_);
  if (done <= 0) return "--:--";
  const auto seconds = static_cast<int64_t>(elapsed / done * static_cast<double>(total_ - step));
  return fmt::format("{:02}:{:02}", seconds / 60, seconds % 60);
}

}  // namespace maskprior::training
