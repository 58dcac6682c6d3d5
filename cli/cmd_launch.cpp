// `maskc launch --nproc N -- train|reproduce|sweep ARGS`: N local processes of maskc-runtime with
// the variables torchrun sets (RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR),
// meeting through a file in a new private folder (MASKC_RENDEZVOUS_FILE; no port open to the
// network, train/rendezvous_file.h), under the process supervisor of core/supervisor.h. SIGINT and
// SIGTERM are passed on to every process; the first process to fail ends the others, and its status
// is launch's exit status. Light: it only starts processes (no LibTorch). See docs/distributed.md.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/error.h"
#include "core/machine.h"
#include "core/supervisor.h"
#include "core/text.h"

namespace maskprior::cli {

namespace {

struct LaunchFlags {
  int nproc = 1;
  double kill_after = 10;
  std::vector<std::string> command;
};

/// A new folder only this user can enter (mkdtemp: mode 0700) for the ranks' rendezvous file,
/// removed with everything in it when the launch ends.
class PrivateFolder {
 public:
  PrivateFolder() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern =
        fmt::format("{}/maskc-launch-XXXXXX", base != nullptr && *base != '\0' ? base : "/tmp");
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw InputError(fmt::format("cannot create a private folder for the rendezvous ({}): {}",
                                   pattern, std::strerror(errno)));
    }
    path_ = pattern;
  }
  ~PrivateFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  PrivateFolder(const PrivateFolder&) = delete;
  PrivateFolder& operator=(const PrivateFolder&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::filesystem::path runtime_program(const char* argv0) {
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  return (error ? std::filesystem::path(argv0) : self).parent_path() / "maskc-runtime";
}

/// Rank `rank` of f.nproc, run in the supervisor's forked child: maskc-runtime COMMAND... with
/// the launcher's variables. Returns only if the program cannot be started.
int exec_rank(const std::filesystem::path& program, const LaunchFlags& f, int rank,
              const std::string& rendezvous) {
  const std::string n = std::to_string(f.nproc), r = std::to_string(rank);
  ::setenv("RANK", r.c_str(), 1);
  ::setenv("LOCAL_RANK", r.c_str(), 1);
  ::setenv("WORLD_SIZE", n.c_str(), 1);
  ::setenv("LOCAL_WORLD_SIZE", n.c_str(), 1);
  ::setenv("MASTER_ADDR", "127.0.0.1", 1);
  ::setenv("MASKC_RENDEZVOUS_FILE", rendezvous.c_str(), 1);
  // The machine's cores shared among the ranks, unless the user chose (as torchrun does).
  const auto threads = std::to_string(std::max(1, all_cores() / static_cast<int>(f.nproc)));
  ::setenv("OMP_NUM_THREADS", threads.c_str(), 0);
  std::vector<std::string> args = {"maskc"};
  args.insert(args.end(), f.command.begin(), f.command.end());
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  ::execv(program.c_str(), argv.data());
  std::cerr << fmt::format("maskc launch: cannot start {}: {}\n", program.string(),
                           std::strerror(errno));
  return kExitUsage;
}

/// Memory one rank takes before it builds a model: maskc-runtime with LibTorch loaded (about
/// 170 MB resident on x86-64 Debian), rounded up.
constexpr double kRankBaseBytes = 256.0 * (1 << 20);

/// Refuses, before any process starts, N ranks this machine cannot hold: more than this user may
/// start (RLIMIT_NPROC), more memory than is available for N LibTorch processes, or more file
/// descriptors than each rank may open (RLIMIT_NOFILE; a couple per peer).
void check_nproc(int nproc) {
  const auto refuse = [nproc](const std::string& why) {
    throw InputError(fmt::format("--nproc {}: {}", nproc, why));
  };
  if (const auto limit = process_limit(); limit && nproc > *limit) {
    refuse(fmt::format("this user may run at most {} processes (ulimit -u)", *limit));
  }
  if (const auto available = available_memory_bytes()) {
    const double needed = nproc * kRankBaseBytes;
    if (needed > *available) {
      refuse(fmt::format(
          "{} processes take at least {} of memory before any model ({} each, LibTorch loaded), "
          "more than the {} this machine has available",
          nproc, human_bytes(static_cast<uint64_t>(needed)),
          human_bytes(static_cast<uint64_t>(kRankBaseBytes)),
          human_bytes(static_cast<uint64_t>(*available))));
    }
  }
  // Every rank inherits launch's limit and opens connections to each other rank (gloo's full
  // mesh) besides its own files.
  constexpr int64_t kFilesPerPeer = 2, kFilesOfARank = 64;
  const int64_t files = int64_t{nproc} * kFilesPerPeer + kFilesOfARank;
  if (const auto limit = open_file_limit(); limit && files > *limit) {
    refuse(
        fmt::format("each process may open {} files (ulimit -n), and needs about {} with {} "
                    "peers ({} per peer and {} of its own)",
                    *limit, files, nproc, kFilesPerPeer, kFilesOfARank));
  }
}

int run_launch(const LaunchFlags& f, const char* argv0) {
  const std::string& what = f.command.front();
  if (what != "train" && what != "reproduce" && what != "sweep") {
    throw CLI::ValidationError("command",
                               fmt::format("launch runs `train`, `reproduce` or `sweep`, not "
                                           "`{}` (maskc launch --nproc N -- train ...)",
                                           what));
  }
  check_nproc(f.nproc);
  const PrivateFolder folder;
  const std::string rendezvous = folder.path() + "/rendezvous";
  const auto program = runtime_program(argv0);
  std::vector<ChildProcess> ranks;
  for (int rank = 0; rank < f.nproc; ++rank) {
    ranks.push_back({fmt::format("rank {}", rank), [&program, &f, rank, &rendezvous] {
                       return exec_rank(program, f, rank, rendezvous);
                     }});
  }
  SuperviseOptions options;
  options.parallel = f.nproc;
  // Its own process group: Ctrl-C at the terminal reaches launch alone, which passes it on once (a
  // second SIGINT would end a rank before its checkpoint). If launch dies, the rank gets SIGTERM.
  options.own_process_group = true;
  // After the first failure the others are stopped, unless it is a clean stop (130, 143), which
  // every rank makes at the same step.
  options.stop_others_on_failure =
      std::chrono::milliseconds(static_cast<int64_t>(f.kill_after * 1e3));
  options.on_stopping_others = [](const ChildExit& failure) {
    std::cerr << fmt::format("maskc launch: a rank exited with status {}; stopping the others\n",
                             failure.status);
  };
  options.cannot_start = [](const ChildProcess&, int error) {
    return fmt::format("cannot start a process: {}", std::strerror(error));
  };
  const Supervision supervision = supervise(ranks, options);
  const ChildExit* failure = supervision.first_failure();
  return failure == nullptr ? 0 : failure->status;
}

}  // namespace

void add_launch_command(CLI::App& app, int& exit_code, const char* argv0) {
  auto flags = std::make_shared<LaunchFlags>();
  auto* cmd = app.add_subcommand(
      "launch",
      "Run `train`, `reproduce` or `sweep` as N local processes (data-parallel training, a suite\n"
      "or grid split across processes), with the variables torchrun sets. See "
      "docs/distributed.md.\n"
      "  maskc launch --nproc 2 -- train --task parity2 --preset quick --out runs/dp");
  cmd->add_option("--nproc,-n", flags->nproc, "Number of processes")
      ->required()
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--kill-after", flags->kill_after,
                  "Seconds the others get to stop after one fails, before SIGKILL")
      ->check(finite_range(0.0, 3600.0));
  cmd->add_option("command", flags->command, "After --: train ..., reproduce ... or sweep ...")
      ->required();
  cmd->callback([flags, &exit_code, argv0] { exit_code = run_launch(*flags, argv0); });
}

}  // namespace maskprior::cli
