// Training faults, end to end through the built maskc (MASKC_PATH): a run killed with SIGKILL at
// any moment (during setup, training, a checkpoint write or the final writes) resumes to exactly
// the result of a run never killed; a diverging run stops with a clear message and keeps its last
// good checkpoint; a full disk or an unwritable folder is a clear error that keeps the previous
// files; two processes cannot share a run or suite folder. Tiny parity2 models, --threads 1.
//
// The kill times are random: the seed is printed, and MASKPRIOR_FAULT_SEED=N repeats a run.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/inotify.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "io/safetensors.h"
#include "tests/test_util.h"

namespace maskprior {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using Args = std::vector<std::string>;

/// The model of every run here: tiny, one thread on the CPU.
const Args kTinyModel = {"--dim", "16", "--depth",   "1", "--heads",  "1",  "--head-dim", "8",
                         "--mlp", "16", "--threads", "1", "--device", "cpu"};

/// `base` followed by kTinyModel and `extra`.
Args with_tiny_model(Args base, const Args& extra) {
  base.insert(base.end(), kTinyModel.begin(), kTinyModel.end());
  base.insert(base.end(), extra.begin(), extra.end());
  return base;
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The exit code of a reaped child: its status, or 128 + the signal that ended it.
int exit_code(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

/// Starts `maskc ARGS` with stdout and stderr to the file or pipe `out`; with `file_limit` > 0
/// its files may grow to that many bytes (RLIMIT_FSIZE; SIGXFSZ ignored, so a write past it fails
/// with EFBIG, as on a full disk).
pid_t spawn_fd(const Args& args, int out, rlim_t file_limit = 0) {
  const pid_t child = ::fork();
  if (child != 0) return child;
  if (out < 0 || ::dup2(out, 1) < 0 || ::dup2(out, 2) < 0) ::_exit(125);
  if (file_limit > 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{.rlim_cur = file_limit, .rlim_max = RLIM_INFINITY};
    ::setrlimit(RLIMIT_FSIZE, &limit);
  }
  std::vector<char*> argv{const_cast<char*>(MASKC_PATH)};
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  ::execv(MASKC_PATH, argv.data());
  ::_exit(126);
}

/// Starts `maskc ARGS` with stdout and stderr to the file `log`.
pid_t spawn(const Args& args, const fs::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const pid_t child = spawn_fd(args, fd);
  ::close(fd);
  return child;
}

int wait_for(pid_t child) {
  int status = 0;
  ::waitpid(child, &status, 0);
  return exit_code(status);
}

/// Every tensor of a checkpoint archive (recursing into sub-archives), by dotted name.
void archive_tensors(torch::serialize::InputArchive& archive, const std::string& prefix,
                     std::vector<std::pair<std::string, torch::Tensor>>& out) {
  for (const std::string& key : archive.keys()) {
    torch::Tensor tensor;
    torch::serialize::InputArchive sub;
    if (archive.try_read(key, tensor)) {
      out.emplace_back(prefix + key, tensor);
    } else if (archive.try_read(key, sub)) {
      archive_tensors(sub, prefix + key + ".", out);
    }
  }
}

class TrainFaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        maskprior::testing::unique_temp_dir(fmt::format("maskprior_train_faults_{}", info->name()));
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path path(const std::string& name) const { return dir_ / name; }

  /// `maskc train` of a tiny parity2 model with the mask prior into `out`.
  static Args train_args(const fs::path& out, int epochs, const Args& extra = {},
                         int checkpoint_every = 3) {
    return with_tiny_model({"train",
                            "--task",
                            "parity2",
                            "--spec",
                            std::string(MASKPRIOR_SOURCE_DIR) + "/specs/gotu/parity2.mask",
                            "--init",
                            "mask",
                            "--n",
                            "6",
                            "--batch-size",
                            "16",
                            "--epochs",
                            std::to_string(epochs),
                            "--eval-every",
                            "2",
                            "--checkpoint-every",
                            std::to_string(checkpoint_every),
                            "-q",
                            "--out",
                            out.string()},
                           extra);
  }
  static Args resume_args(const fs::path& out) { return {"train", "--resume", out.string(), "-q"}; }

  struct Result {
    int code = -1;
    std::string log;
  };
  Result run(const Args& args) const {
    const fs::path log = path("log.txt");
    const int code = wait_for(spawn(args, log));
    return {code, read_text(log)};
  }

  /// As run(), but a command still running after `seconds` (blocked: a hang) is killed and
  /// reported as code -1.
  Result run_for_at_most(const Args& args, int seconds) const {
    const fs::path log = path("log.txt");
    const pid_t child = spawn(args, log);
    const auto deadline = Clock::now() + std::chrono::seconds(seconds);
    int status = 0;
    while (::waitpid(child, &status, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        ::kill(child, SIGKILL);
        ::waitpid(child, &status, 0);
        return {-1, read_text(log) + fmt::format("\n(still running after {} s: killed)", seconds)};
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return {exit_code(status), read_text(log)};
  }

  /// A run stopped after `steps` steps (exit 130), to be resumed; `changed` holds flags and
  /// values that replace those of train_args or are added.
  fs::path stopped_run(const std::string& name, int steps, const Args& changed = {}) const {
    const fs::path run_dir = path(name);
    Args args = train_args(run_dir, 4);
    for (size_t i = 0; i + 1 < changed.size(); i += 2) {
      const auto flag = std::find(args.begin(), args.end(), changed[i]);
      if (flag != args.end()) {
        *(flag + 1) = changed[i + 1];
      } else {
        args.insert(args.end(), {changed[i], changed[i + 1]});
      }
    }
    args.insert(args.end(), {"--stop-after", std::to_string(steps)});
    const Result r = run(args);
    EXPECT_EQ(r.code, 130) << r.log;
    return run_dir;
  }

  /// The weights of a run folder: every tensor (hashed) and the config without the folder's path.
  static json weights(const fs::path& run) {
    const SafetensorsData data = read_safetensors((run / "weights.safetensors").string());
    json tensors = json::object();
    for (const auto& [name, tensor] : data.tensors) {
      const std::string bytes(tensor.bytes.begin(), tensor.bytes.end());
      tensors[name] = {tensor.dtype, tensor.shape, std::hash<std::string>{}(bytes)};
    }
    json config = json::parse(data.metadata.at("config"));
    config.erase("out");
    return {{"tensors", tensors}, {"config", config}};
  }

  /// Runs `maskc ARGS` under a file size limit; its output comes through a pipe, which the limit
  /// does not cut short as it would a log file.
  static Result run_with_file_limit(const Args& args, rlim_t file_limit) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
    const pid_t child = spawn_fd(args, pipe_fds[1], file_limit);
    ::close(pipe_fds[1]);
    Result r;
    char buffer[4096];
    for (ssize_t got; (got = ::read(pipe_fds[0], buffer, sizeof(buffer))) > 0;) {
      r.log.append(buffer, static_cast<size_t>(got));
    }
    ::close(pipe_fds[0]);
    r.code = wait_for(child);
    return r;
  }

  /// What a run folder holds that must not depend on interruptions: summary.json without its
  /// wall-clock time, every metrics record, the weights and the learned mask, byte for byte.
  static json outcome(const fs::path& run) {
    json summary = json::parse(read_text(run / "summary.json"));
    summary.erase("wall_seconds");
    json records = json::array();
    std::ifstream in(run / "metrics.jsonl");
    for (std::string line; std::getline(in, line);) {
      json record = json::parse(line);
      record.erase("wall_seconds");
      records.push_back(record);
    }
    return {{"summary", summary},
            {"metrics", records},
            {"weights", weights(run)},
            {"mask", std::hash<std::string>{}(read_text(run / "mask.safetensors"))}};
  }

  /// Files of `run` left by an interrupted write (NAME.tmp-PID-XXXXXXXX).
  static std::vector<std::string> temp_files(const fs::path& run) {
    std::vector<std::string> names;
    for (const auto& e : fs::directory_iterator(run)) {
      const std::string name = e.path().filename().string();
      if (name.find(".tmp-") != std::string::npos) names.push_back(name);
    }
    return names;
  }

  /// The next command for a run folder that was killed: resume it when it has a checkpoint,
  /// else start it again (a new run takes over a folder that never reached a checkpoint).
  static Args next_command(const fs::path& run, const Args& fresh) {
    return fs::exists(run / "checkpoint.pt") ? resume_args(run) : fresh;
  }

  fs::path dir_;
};

/// The seed of the random kill times: MASKPRIOR_FAULT_SEED, or a fresh one (printed either way).
uint64_t fault_seed() {
  const char* given = std::getenv("MASKPRIOR_FAULT_SEED");
  const uint64_t seed =
      given != nullptr ? std::strtoull(given, nullptr, 10) : std::random_device{}();
  std::cout << "kill times seeded with " << seed << " (repeat with MASKPRIOR_FAULT_SEED=" << seed
            << ")\n";
  return seed;
}

// ---------------------------------------------------------------------------------------------
// kill -9 and resume

// SIGKILL at random moments of the whole run (setup, steps, evaluations, checkpoint writes, the
// final writes), each time continued from what the folder holds, ends exactly as a run never
// killed: the same summary, metrics records, weights and learned mask.
TEST_F(TrainFaultsTest, KilledAtRandomMomentsEndsAsIfNeverKilled) {
  constexpr int kEpochs = 30, kKills = 6;
  const auto started = Clock::now();
  ASSERT_EQ(run(train_args(path("whole"), kEpochs)).code, 0);
  const double whole_seconds = std::chrono::duration<double>(Clock::now() - started).count();
  const uint64_t seed = fault_seed();
  SCOPED_TRACE(fmt::format("MASKPRIOR_FAULT_SEED={}", seed));
  std::mt19937_64 random(seed);
  double bound = whole_seconds;  // kill within this many seconds of a start
  const fs::path run_dir = path("run");
  const Args fresh = train_args(run_dir, kEpochs);
  int killed = 0;
  for (int i = 0; i < kKills && !fs::exists(run_dir / "summary.json"); ++i) {
    const Args command = next_command(run_dir, fresh);
    const double seconds = std::uniform_real_distribution<double>(0.0, bound)(random);
    const pid_t child = spawn(command, path("log.txt"));
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    ::kill(child, SIGKILL);
    const int code = wait_for(child);
    killed += code == 128 + SIGKILL;
    std::cout << fmt::format("kill {} after {:.3f} s of `{}`: exit {}\n", i, seconds,
                             command[1] == "--resume" ? "train --resume" : "train", code);
    ASSERT_TRUE(code == 128 + SIGKILL || code == 0) << read_text(path("log.txt"));
    if (code == 0 && killed == 0) {  // the machine got faster than the reference run: again
      fs::remove_all(run_dir);
      bound /= 2;
    }
  }
  const Result last = run(next_command(run_dir, fresh));
  ASSERT_EQ(last.code, 0) << last.log;
  EXPECT_GT(killed, 0);
  EXPECT_EQ(outcome(run_dir), outcome(path("whole")));
  EXPECT_EQ(temp_files(run_dir), std::vector<std::string>{});
}

// Killed while setting up (the folder locked but empty, only config.json, config and init.json
// written): nothing to resume, `--resume` says so, and the same command starts it again.
TEST_F(TrainFaultsTest, KilledDuringSetupStartsAgain) {
  constexpr int kEpochs = 2;
  ASSERT_EQ(run(train_args(path("whole"), kEpochs)).code, 0);
  for (const std::string trigger : {".lock", "config.json", "init.json"}) {
    SCOPED_TRACE("killed once " + trigger + " exists");
    const fs::path run_dir = path("run-" + trigger);
    const Args fresh = train_args(run_dir, kEpochs);
    const pid_t child = spawn(fresh, path("log.txt"));
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (!fs::exists(run_dir / trigger) && Clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ::kill(child, SIGKILL);
    ASSERT_EQ(wait_for(child), 128 + SIGKILL) << "finished before the kill";
    if (!fs::exists(run_dir / "checkpoint.pt")) {  // init.json may come just before the first
      const Result resumed = run(resume_args(run_dir));
      EXPECT_EQ(resumed.code, 1);
      EXPECT_TRUE(resumed.log.find("not a run folder") != std::string::npos ||
                  resumed.log.find("never reached a checkpoint") != std::string::npos)
          << resumed.log;
    }
    const Result again = run(next_command(run_dir, fresh));
    ASSERT_EQ(again.code, 0) << again.log;
    EXPECT_EQ(outcome(run_dir), outcome(path("whole")));
  }
}

/// Starts `command` and kills it (SIGKILL) as soon as it creates the temporary file of its
/// `nth` write of `name` (checkpoint.pt, weights.safetensors, ...); returns whether that
/// temporary file was still there after the kill (the kill hit the write itself, before its
/// rename).
bool kill_during_write(const Args& command, const fs::path& run_dir, const std::string& name,
                       int nth, const fs::path& log) {
  const std::string temp = name + ".tmp-";
  fs::create_directories(run_dir);
  const int watch = ::inotify_init1(IN_CLOEXEC);
  ::inotify_add_watch(watch, run_dir.c_str(), IN_CREATE);
  const pid_t child = spawn(command, log);
  int seen = 0;
  alignas(inotify_event) char buffer[4096];
  while (seen < nth) {
    pollfd ready{.fd = watch, .events = POLLIN, .revents = 0};
    if (::poll(&ready, 1, /*timeout ms=*/60000) <= 0) break;  // the run ended without it
    const ssize_t got = ::read(watch, buffer, sizeof(buffer));
    if (got <= 0) break;
    for (ssize_t at = 0; at < got && seen < nth;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if (event->len > 0 && std::string(event->name).starts_with(temp)) ++seen;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  ::kill(child, SIGKILL);
  wait_for(child);
  ::close(watch);
  for (const auto& e : fs::directory_iterator(run_dir)) {
    if (e.path().filename().string().starts_with(temp)) return true;
  }
  return false;
}

// Killed in the middle of writing a checkpoint: the previous checkpoint is intact (the write
// goes to a temporary file renamed into place), the run resumes from it, and the next write
// removes the dead process's temporary file.
TEST_F(TrainFaultsTest, KilledDuringACheckpointWriteResumesFromThePreviousOne) {
  constexpr int kEpochs = 6;
  ASSERT_EQ(run(train_args(path("whole"), kEpochs)).code, 0);
  int caught = 0;
  for (const int nth : {1, 2, 3}) {
    SCOPED_TRACE(fmt::format("killed during checkpoint write {}", nth));
    const fs::path run_dir = path(fmt::format("run{}", nth));
    const Args fresh = train_args(run_dir, kEpochs);
    // Under load the write may finish before the kill lands: then the kill missed it.
    const bool hit = kill_during_write(fresh, run_dir, "checkpoint.pt", nth, path("log.txt"));
    caught += hit;
    if (hit) {
      EXPECT_EQ(fs::exists(run_dir / "checkpoint.pt"), nth > 1);
    }
    const Result rest = run(next_command(run_dir, fresh));
    ASSERT_EQ(rest.code, 0) << rest.log;
    EXPECT_EQ(outcome(run_dir), outcome(path("whole")));
    EXPECT_EQ(temp_files(run_dir), std::vector<std::string>{});
  }
  std::cout << caught << " of 3 kills left a temporary checkpoint (hit the write itself)\n";
  EXPECT_GT(caught, 0) << "no kill landed inside a checkpoint write";
}

// Killed while writing the final files (after the last checkpoint, before summary.json): the
// resumed run finishes with the same summary, including the last evaluation's train loss.
TEST_F(TrainFaultsTest, KilledDuringTheFinalWritesFinishesTheSame) {
  constexpr int kEpochs = 2;
  ASSERT_EQ(run(train_args(path("whole"), kEpochs)).code, 0);
  for (const std::string name : {"weights.safetensors", "mask.safetensors", "summary.json"}) {
    SCOPED_TRACE("killed while writing " + name);
    const fs::path run_dir = path("run-" + name);
    kill_during_write(train_args(run_dir, kEpochs), run_dir, name, 1, path("log.txt"));
    ASSERT_TRUE(fs::exists(run_dir / "checkpoint.pt"));
    const Result rest = run(resume_args(run_dir));
    ASSERT_EQ(rest.code, 0) << rest.log;
    EXPECT_EQ(outcome(run_dir), outcome(path("whole")));
    EXPECT_EQ(temp_files(run_dir), std::vector<std::string>{});
  }
}

// A record of metrics.jsonl cut short (killed while appending) is dropped when resuming.
TEST_F(TrainFaultsTest, RecordCutShortIsDroppedOnResume) {
  constexpr int kEpochs = 4;
  ASSERT_EQ(run(train_args(path("whole"), kEpochs)).code, 0);
  const fs::path run_dir = path("run");
  ASSERT_EQ(run(train_args(run_dir, kEpochs, {"--stop-after", "7"})).code, 130);
  std::ofstream(run_dir / "metrics.jsonl", std::ios::app) << R"({"step": 8, "accur)";
  const Result rest = run(resume_args(run_dir));
  ASSERT_EQ(rest.code, 0) << rest.log;
  EXPECT_EQ(outcome(run_dir), outcome(path("whole")));
}

// ---------------------------------------------------------------------------------------------
// Hangs and signals

// A FIFO in place of a file that --resume reads (metrics.jsonl, checkpoint.pt and its
// checkpoint.json) blocked open() forever, with the first SIGTERM swallowed: it is refused at
// once, naming the file, and the folder is left as it was.
TEST_F(TrainFaultsTest, ResumeRefusesRunFilesThatAreNotRegularFiles) {
  for (const std::string name : {"metrics.jsonl", "checkpoint.pt", "checkpoint.json"}) {
    SCOPED_TRACE(name);
    const fs::path run_dir = stopped_run("run-" + name, 5);
    fs::remove(run_dir / name);
    ASSERT_EQ(::mkfifo((run_dir / name).c_str(), 0600), 0) << std::strerror(errno);
    const Result r = run_for_at_most(resume_args(run_dir), 60);
    EXPECT_EQ(r.code, 1) << r.log;
    EXPECT_NE(r.log.find(fmt::format("'{}': it is not a regular file (a FIFO)",
                                     (run_dir / name).string())),
              std::string::npos)
        << r.log;
    EXPECT_TRUE(fs::is_fifo(run_dir / name));
  }
}

// A signal while a run sets up (here a qk-opt fit of 10^9 steps) ends it at once, through the
// normal error path: the conventional exit status, a message saying what it was doing, and no
// run folder (the folder is written only once set-up is done).
TEST_F(TrainFaultsTest, SignalDuringSetUpEndsTheRunPromptly) {
  for (const int sig : {SIGTERM, SIGINT}) {
    SCOPED_TRACE(strsignal(sig));
    const fs::path run_dir = path(fmt::format("run{}", sig));
    Args args = train_args(run_dir, 4);
    const auto init = std::find(args.begin(), args.end(), "mask");
    *init = "qk-opt";
    args.insert(args.end(), {"--qk-opt-steps", "1000000000"});
    const pid_t child = spawn(args, path("log.txt"));
    // Two seconds of CPU time: LibTorch is loaded and the handlers installed, and the tiny
    // model is inside its fit (whose steps take a few ms each).
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (Clock::now() < deadline) {
      std::ifstream stat(fmt::format("/proc/{}/stat", child));
      std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
      const size_t end = text.rfind(')');
      std::istringstream fields(end == std::string::npos ? "" : text.substr(end + 2));
      std::string field;
      long long user = 0, system = 0;
      for (int i = 3; i <= 15 && fields >> field; ++i) {
        if (i == 14) user = std::stoll(field);
        if (i == 15) system = std::stoll(field);
      }
      if (user + system >= 2 * ::sysconf(_SC_CLK_TCK)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(child, sig);
    const auto signalled = Clock::now();
    int status = 0;
    while (::waitpid(child, &status, WNOHANG) == 0 &&
           Clock::now() - signalled < std::chrono::seconds(60)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (::waitpid(child, &status, WNOHANG) == 0) {  // still running: the signal was not heeded
      ::kill(child, SIGKILL);
      ::waitpid(child, &status, 0);
      FAIL() << "still setting up a minute after the signal: " << read_text(path("log.txt"));
    }
    const std::string log = read_text(path("log.txt"));
    EXPECT_TRUE(WIFEXITED(status)) << "ended by a signal, not through the error path: " << log;
    EXPECT_EQ(exit_code(status), 128 + sig) << log;
    EXPECT_NE(log.find(fmt::format("maskc: stopped by {} while fitting the qk-opt "
                                   "initialisation, before training started",
                                   sig == SIGTERM ? "SIGTERM" : "SIGINT")),
              std::string::npos)
        << log;
    EXPECT_FALSE(fs::exists(run_dir)) << log;
  }
}

// ---------------------------------------------------------------------------------------------
// A resumed run is the run it claims to be

// config.json edited after the run started is refused, naming the key and both values; a value
// that is not a whole number in range for an integer setting, and a config.json that is not an
// object, are errors naming the file, never converted out of range.
TEST_F(TrainFaultsTest, ResumeRefusesAnEditedConfig) {
  const fs::path run_dir = stopped_run("run", 5);
  const std::string original = read_text(run_dir / "config.json");
  const auto resume_with = [&](const std::function<void(json&)>& edit) {
    json config = json::parse(original);
    edit(config);
    std::ofstream(run_dir / "config.json") << config.dump(2);
    return run_for_at_most(resume_args(run_dir), 120);
  };
  const std::string config_path = (run_dir / "config.json").string();
  Result r = resume_with([](json& c) { c["lr"] = 0.5; });
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find(fmt::format("{} changed since the run was created: lr was '{}', now '0.5'",
                                   config_path, json::parse(original)["lr"].dump())),
            std::string::npos)
      << r.log;
  r = resume_with([](json& c) { c["seed"] = 7; });
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find("seed was '0', now '7'"), std::string::npos) << r.log;
  for (const json& dim : {json(32.5), json(1e30), json(-1e30)}) {
    r = resume_with([&](json& c) { c["dim"] = dim; });
    EXPECT_EQ(r.code, 1) << r.log;
    EXPECT_NE(r.log.find(fmt::format("{}: error: training config: key 'dim' must be a whole number "
                                     "from -9223372036854775808 to 9223372036854775807, not {}",
                                     config_path, dim.dump())),
              std::string::npos)
        << r.log;
  }
  std::ofstream(run_dir / "config.json") << "[1, 2]\n";
  r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find(config_path + ":1: error: a run's config is a JSON object, not an array"),
            std::string::npos)
      << r.log;
  // Restored, it resumes.
  std::ofstream(run_dir / "config.json") << original;
  r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 0) << r.log;
}

// A spec or data file that changed since the run was created (the same vocabulary, other
// examples) is refused, naming it.
TEST_F(TrainFaultsTest, ResumeRefusesAChangedSpecOrDataFile) {
  std::ofstream(path("rev.mask"))
      << "mask rev\ntokens a[3], eq, c[3]\ndigits a msb_first\nhard causal\nopen diagonal\n";
  std::ofstream(path("train.txt")) << "1 2 3 = 3 2 1\n4 5 6 = 6 5 4\n7 8 9 = 9 8 7\n";
  const fs::path run_dir = path("run");
  const Args fresh = with_tiny_model({"train",
                                      "--data",
                                      path("train.txt").string(),
                                      "--spec",
                                      path("rev.mask").string(),
                                      "--predict",
                                      "c",
                                      "--init",
                                      "mask",
                                      "--batch-size",
                                      "1",
                                      "--epochs",
                                      "4",
                                      "--checkpoint-every",
                                      "2",
                                      "--stop-after",
                                      "5",
                                      "-q",
                                      "--out",
                                      run_dir.string()},
                                     {});
  const Result started = run(fresh);
  ASSERT_EQ(started.code, 130) << started.log;
  for (const std::string file : {"rev.mask", "train.txt"}) {
    SCOPED_TRACE(file);
    const std::string before = read_text(path(file));
    std::ofstream(path(file)) << (file == "rev.mask" ? before + "# edited\n"
                                                     : "4 5 6 = 6 5 4\n1 2 3 = 3 2 1\n"
                                                       "7 8 9 = 9 8 7\n");
    const Result r = run_for_at_most(resume_args(run_dir), 120);
    EXPECT_EQ(r.code, 1) << r.log;
    EXPECT_NE(r.log.find(fmt::format("the {} file '{}' changed since the run in {} was created",
                                     file == "rev.mask" ? "spec" : "data", path(file).string(),
                                     (run_dir / "config.json").string())),
              std::string::npos)
        << r.log;
    std::ofstream(path(file)) << before;
  }
  EXPECT_EQ(run_for_at_most(resume_args(run_dir), 120).code, 0);
}

// A damaged checkpoint, or one of another run, is refused as a corrupt checkpoint (not loaded,
// and not reported as a diverged training); one of another architecture, with its checkpoint.json,
// is named as such, not as a LibTorch shape error.
TEST_F(TrainFaultsTest, ResumeRefusesACorruptOrForeignCheckpoint) {
  const fs::path run_dir = stopped_run("run", 5);
  const std::string good = read_text(run_dir / "checkpoint.pt");
  std::string damaged = good;
  damaged[damaged.size() / 2] = static_cast<char>(damaged[damaged.size() / 2] ^ 0x10);
  std::ofstream(run_dir / "checkpoint.pt", std::ios::binary) << damaged;
  Result r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find("corrupt checkpoint: " + (run_dir / "checkpoint.pt").string()),
            std::string::npos)
      << r.log;
  EXPECT_EQ(r.log.find("diverged"), std::string::npos) << r.log;

  const fs::path other = stopped_run("other", 5, {"--seed", "3"});
  fs::copy_file(other / "checkpoint.pt", run_dir / "checkpoint.pt",
                fs::copy_options::overwrite_existing);
  r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find("is none of the checkpoints this run wrote"), std::string::npos) << r.log;

  const fs::path wide = stopped_run("wide", 5, {"--mlp", "24"});
  for (const char* name : {"checkpoint.pt", "checkpoint.json"}) {
    fs::copy_file(wide / name, run_dir / name, fs::copy_options::overwrite_existing);
  }
  r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find(fmt::format("checkpoint {} was written by a model of another "
                                   "architecture: '",
                                   (run_dir / "checkpoint.pt").string())),
            std::string::npos)
      << r.log;
  EXPECT_NE(r.log.find("24] there and "), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("16] in this run's model"), std::string::npos) << r.log;

  std::ofstream(run_dir / "checkpoint.pt", std::ios::binary) << good;  // restored: it resumes
  fs::copy_file(other / "checkpoint.json", run_dir / "checkpoint.json",
                fs::copy_options::overwrite_existing);
  r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 1) << r.log;  // checkpoint.json of another run: the pair does not match
}

// Evaluations lost from metrics.jsonl are named in a warning and in the summary; records the run
// never wrote are refused; a new run never appends to a metrics.jsonl it did not write.
TEST_F(TrainFaultsTest, LostOrForeignMetricsHistoryIsReported) {
  const fs::path run_dir = stopped_run("run", 7);  // evaluations at 0, 2, 4, 6
  const std::string metrics = read_text(run_dir / "metrics.jsonl");
  std::string kept;
  std::istringstream lines(metrics);
  for (std::string line; std::getline(lines, line);) {
    if (json::parse(line).value("step", -1) != 2) kept += line + "\n";
  }
  std::ofstream(run_dir / "metrics.jsonl") << kept + R"({"step": 3, "accuracy": 1.0})"
                                           << "\n";
  Result r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find("is not this run's history: it holds evaluations at steps 3 that the run "
                       "never wrote before its checkpoint at step 7 (it wrote 0, 2, 4, 6)"),
            std::string::npos)
      << r.log;
  std::ofstream(run_dir / "metrics.jsonl") << kept;
  r = run_for_at_most(resume_args(run_dir), 120);
  EXPECT_EQ(r.code, 0) << r.log;
  EXPECT_NE(r.log.find("lost the evaluations at steps 2 (written before the checkpoint at step 7)"),
            std::string::npos)
      << r.log;
  EXPECT_EQ(json::parse(read_text(run_dir / "summary.json"))["missing_evaluations"],
            json::array({2}));

  // A folder with another run's metrics.jsonl and no config.json is not taken over.
  const fs::path foreign = path("foreign");
  fs::create_directories(foreign);
  std::ofstream(foreign / "metrics.jsonl") << R"({"step": 0, "foreign": true})"
                                           << "\n";
  r = run_for_at_most(train_args(foreign, 1), 120);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(r.log.find(foreign.string() + " holds metrics.jsonl but no config.json"),
            std::string::npos)
      << r.log;
  EXPECT_EQ(read_text(foreign / "metrics.jsonl"), R"({"step": 0, "foreign": true})"
                                                  "\n");
  // One that a run never checkpointed in is taken over: its metrics.jsonl is started anew.
  std::ofstream(foreign / "config.json") << "{}\n";
  r = run_for_at_most(train_args(foreign, 1), 120);
  EXPECT_EQ(r.code, 0) << r.log;
  EXPECT_EQ(read_text(foreign / "metrics.jsonl").find("foreign"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Divergence

// A learning rate far too large makes the loss non-finite: the run stops with exit 1 and a
// message naming the step, the loss and the remedy, writes no checkpoint of the broken state
// (the last good one stays, finite) and no summary.
TEST_F(TrainFaultsTest, DivergenceStopsAndKeepsTheLastGoodCheckpoint) {
  const fs::path run_dir = path("run");
  const Result r = run(train_args(run_dir, 50, {"--lr", "1e30"}, /*checkpoint_every=*/1));
  EXPECT_EQ(r.code, 1) << r.log;
  const size_t at = r.log.find("maskc: error: step ");
  ASSERT_NE(at, std::string::npos) << r.log;
  ASSERT_NE(r.log.find("the training diverged", at), std::string::npos) << r.log;
  const int64_t failed = std::stoll(r.log.substr(at + std::strlen("maskc: error: step ")));
  EXPECT_NE(r.log.find("lower --lr"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("last good checkpoint"), std::string::npos) << r.log;
  EXPECT_FALSE(fs::exists(run_dir / "summary.json"));
  EXPECT_EQ(temp_files(run_dir), std::vector<std::string>{});
  ASSERT_TRUE(fs::exists(run_dir / "checkpoint.pt")) << r.log;
  torch::serialize::InputArchive checkpoint;
  checkpoint.load_from((run_dir / "checkpoint.pt").string());
  torch::Tensor step;
  checkpoint.read("step", step);
  EXPECT_LT(step.item<int64_t>(), failed);
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  archive_tensors(checkpoint, "", tensors);
  EXPECT_GT(tensors.size(), 5u);
  for (const auto& [name, tensor] : tensors) {
    if (tensor.is_floating_point()) {
      EXPECT_TRUE(torch::isfinite(tensor).all().item<bool>()) << name;
    }
  }
  // The run is deterministic: resumed, it diverges again at the same step.
  const Result again = run(resume_args(run_dir));
  EXPECT_EQ(again.code, 1);
  EXPECT_NE(again.log.find(fmt::format("step {}: ", failed)), std::string::npos) << again.log;
}

// ---------------------------------------------------------------------------------------------
// Full disk, unwritable folder

// A checkpoint that does not fit (the file size limit stands in for a full disk) stops the run
// with a clear error; the previous checkpoint is unchanged, no temporary file is left, and once
// there is room the run resumes to the same result as one never stopped.
TEST_F(TrainFaultsTest, FullDiskKeepsThePreviousCheckpoint) {
  constexpr int kEpochs = 4;
  ASSERT_EQ(run(train_args(path("whole"), kEpochs)).code, 0);
  const fs::path run_dir = path("run");
  ASSERT_EQ(run(train_args(run_dir, kEpochs, {"--stop-after", "4"})).code, 130);
  const std::string before = read_text(run_dir / "checkpoint.pt");
  const auto limit = static_cast<rlim_t>(before.size() / 2);
  ASSERT_LT(fs::file_size(run_dir / "metrics.jsonl") + 4096, limit) << "a larger model is needed";
  const Result full = run_with_file_limit(resume_args(run_dir), limit);
  EXPECT_EQ(full.code, 1) << full.log;
  EXPECT_NE(full.log.find(fmt::format("cannot write '{}'", (run_dir / "checkpoint.pt").string())),
            std::string::npos)
      << full.log;
  EXPECT_NE(full.log.find("file size limit"), std::string::npos) << full.log;
  EXPECT_EQ(read_text(run_dir / "checkpoint.pt"), before);
  EXPECT_EQ(temp_files(run_dir), std::vector<std::string>{});
  const Result rest = run(resume_args(run_dir));
  ASSERT_EQ(rest.code, 0) << rest.log;
  EXPECT_EQ(outcome(run_dir), outcome(path("whole")));

  // With no room even for config.json, a new run fails at once and leaves no folder behind.
  const Result none = run_with_file_limit(train_args(path("none"), kEpochs), 64);
  EXPECT_EQ(none.code, 1) << none.log;
  EXPECT_NE(none.log.find("config.json"), std::string::npos) << none.log;
  EXPECT_FALSE(fs::exists(path("none")));
}

TEST_F(TrainFaultsTest, OutFolderUnderARegularFileIsAClearError) {
  std::ofstream(path("plain")) << "data";
  const Result r = run(train_args(path("plain") / "run", 1));
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.log.find("cannot create folder"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("Not a directory"), std::string::npos) << r.log;
  EXPECT_EQ(read_text(path("plain")), "data");
}

// ---------------------------------------------------------------------------------------------
// Two processes, one folder

/// Waits until `lock` holds a PID (its holder has the lock); false after a minute.
bool wait_for_lock(const fs::path& lock) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (Clock::now() < deadline) {
    if (!read_text(lock).empty()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

// While a run trains into a folder, a second `maskc train` there (new or --resume) is refused at
// once with the holder's PID, and the first run is not disturbed.
TEST_F(TrainFaultsTest, SecondTrainOnTheSameFolderIsRefused) {
  const fs::path run_dir = path("run");
  const pid_t first = spawn(train_args(run_dir, 100000), path("first.txt"));
  ASSERT_TRUE(wait_for_lock(run_dir / ".lock"));
  const std::string expected = fmt::format(
      "{} is in use by process {}; wait for it or choose another --out", run_dir.string(), first);
  for (const Args& second : {train_args(run_dir, 1), resume_args(run_dir)}) {
    const Result r = run(second);
    EXPECT_EQ(r.code, 1) << r.log;
    EXPECT_NE(r.log.find(expected), std::string::npos) << r.log;
  }
  ::kill(first, SIGTERM);
  EXPECT_EQ(wait_for(first), 128 + SIGTERM) << read_text(path("first.txt"));
  EXPECT_TRUE(fs::exists(run_dir / "checkpoint.pt"));
  // Released: the stopped run resumes.
  EXPECT_EQ(run({"train", "--resume", run_dir.string(), "-q", "--stop-after", "1"}).code, 130);
}

// Likewise for `maskc reproduce` on one results folder.
TEST_F(TrainFaultsTest, SecondReproduceOnTheSameFolderIsRefused) {
  const fs::path suite = path("suite");
  const Args reproduce = {"reproduce",    "demo",     "--out",  suite.string(), "--only",
                          "parity2-mask", "--epochs", "100000", "--threads",    "1",
                          "--device",     "cpu"};
  const pid_t first = spawn(reproduce, path("first.txt"));
  ASSERT_TRUE(wait_for_lock(suite / ".lock"));
  const Result r = run(reproduce);
  EXPECT_EQ(r.code, 1) << r.log;
  EXPECT_NE(
      r.log.find(fmt::format("{} is in use by process {}; wait for it or choose another --out",
                             suite.string(), first)),
      std::string::npos)
      << r.log;
  // SIGTERM, not SIGKILL: reproduce passes it on to the run it supervises and waits for it to
  // checkpoint and end. After a SIGKILL that run would go on writing into the folder TearDown
  // removes (it ends on the SIGTERM its parent's death sends it).
  ::kill(first, SIGTERM);
  wait_for(first);
}

}  // namespace
}  // namespace maskprior
