#include "train/session_clock.h"

namespace maskprior::training {

double SessionClock::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - started_).count();
}

void SessionClock::begin_steps(int64_t step) {
  first_step_ = step;
  setup_seconds_ = elapsed();
}

void SessionClock::step_done(int64_t steps, Clock::time_point begin) {
  if (steps <= first_step_ + 1) return;
  step_seconds_ += std::chrono::duration<double>(Clock::now() - begin).count();
  ++timed_steps_;
}

nlohmann::json SessionClock::timing() const {
  return {{"setup_seconds", setup_seconds_},
          {"evaluation_seconds", evaluation_seconds_},
          {"seconds_per_step",
           timed_steps_ > 0 ? nlohmann::json(step_seconds_ / static_cast<double>(timed_steps_))
                            : nlohmann::json()},
          {"timed_steps", timed_steps_}};
}

}  // namespace maskprior::training
