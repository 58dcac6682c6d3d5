// Several processes, one job: data-parallel training (`maskc train` under `maskc launch`,
// torchrun or Slurm) and suites split across ranks (`maskc reproduce`), through LibTorch's c10d.
//
// A group is joined through a rendezvous store: on one machine a c10d FileStore in a private folder
// (train/rendezvous_file.h; `maskc launch`, MASKC_RENDEZVOUS_FILE, or a loopback MASTER_ADDR),
// across machines a TCPStore served by rank 0 at MASTER_ADDR:MASTER_PORT. Gradients are
// summed with ProcessGroupGloo (CPU; CUDA tensors go through a CPU buffer) or ProcessGroupNCCL
// (CUDA, only in builds configured with -DMASKPRIOR_WITH_NCCL=ON). docs/distributed.md says what
// is and is not deterministic. The interface is free of LibTorch headers (reproduce.cpp uses it).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace at {
class Tensor;
}

namespace maskprior::training {

/// Where this process stands in a group: as torchrun (and `maskc launch`) or Slurm say it.
struct World {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  std::string master_addr = "127.0.0.1";
  int master_port = 29500;
  /// The rendezvous file (MASKC_RENDEZVOUS_FILE); empty: chosen from the master address (see
  /// rendezvous_file_of).
  std::string rendezvous_file;
  /// How long a collective (or joining) waits for a peer before it fails with an error.
  double timeout_seconds = 60;
};

/// The range of World::timeout_seconds (`--dist-timeout`, MASKC_DIST_TIMEOUT).
inline constexpr double kMinTimeoutSeconds = 0.001;
inline constexpr double kMaxTimeoutSeconds = 1e7;

/// The World of the launcher's variables: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE,
/// MASTER_ADDR, MASTER_PORT (torchrun, `maskc launch`), or else, inside an srun job step,
/// SLURM_PROCID, SLURM_STEP_NUM_TASKS, SLURM_LOCALID, SLURM_STEP_TASKS_PER_NODE with
/// MASTER_ADDR/MASTER_PORT; MASKC_DIST_TIMEOUT (seconds, as `--dist-timeout` takes them) sets the
/// timeout and MASKC_RENDEZVOUS_FILE the rendezvous file. nullopt when neither RANK nor an srun
/// step is there. InputError naming the variable for a value that is not a number in range, and
/// for WORLD_SIZE without RANK.
std::optional<World> world_from_environment();

/// Checks a World (0 <= rank < size, a port in 1..65535, a timeout in range, a master address
/// that can be one: check_master_address); InputError if not.
void check_world(const World& world);

/// An IPv4 or IPv6 literal, or a host name (labels of letters, digits and '-'); InputError at once
/// for anything else (999.1.1.1, "bad addr"), rather than after the rendezvous timeout.
void check_master_address(const std::string& address);

/// Where the ranks of `world` meet: the FileStore path (its rendezvous_file, or, when the master
/// address is loopback, rendezvous-PORT in this user's private folder), or "" for a TCPStore at
/// MASTER_ADDR:MASTER_PORT (ranks on several machines). InputError for an unsafe path.
std::string rendezvous_file_of(const World& world);

/// The rows [offset, offset + size) of a batch of `count` rows that `rank` of `world` computes:
/// contiguous, sizes differing by at most one; `size` is 0 for a rank beyond the rows.
struct Shard {
  int64_t offset = 0;
  int64_t size = 0;
};
Shard shard_of(int64_t count, int rank, int world);

/// A joined group of processes (data-parallel training).
class ProcessGroup {
 public:
  /// Joins the group: blocks until every rank has joined, or fails after the timeout with an
  /// InputError saying which address it waited on. `cuda`: the tensors live on a GPU.
  ProcessGroup(const World& world, bool cuda);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const;
  int size() const;
  int local_rank() const;

  /// Sums the gradients of `params` over the ranks, in place, flattened into buckets of at most
  /// kBucketBytes (one collective per bucket, all in flight at once); parameters without a
  /// gradient are skipped (the same on every rank: every rank runs the same graph). `extra` (e.g.
  /// this rank's share of the loss) is summed in the first bucket; returns the sum.
  double sum_gradients(const std::vector<at::Tensor>& params, double extra);
  /// Copies rank 0's values of `tensors` to every rank (flattened, one collective per bucket).
  void broadcast(const std::vector<at::Tensor>& tensors);
  /// The largest of the ranks' values (stop agreement: the signal each rank received, or 0).
  int64_t max(int64_t value);
  /// Rank 0 runs `work` (an evaluation, a write) while the others wait for it through the store,
  /// without the collective timeout (rank 0 dying ends the wait at once).
  void on_rank0(const std::function<void()>& work);

  static constexpr int64_t kBucketBytes = int64_t{25} << 20;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The rendezvous store alone (no collectives): `maskc reproduce` under several ranks uses it to
/// tell rank 0 when each rank's share of the runs is done.
class Rendezvous {
 public:
  explicit Rendezvous(const World& world);
  ~Rendezvous();
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  /// Sets `key` to `value`.
  void set(const std::string& key, const std::string& value);
  /// The value of `key` if it is set (does not wait).
  std::optional<std::string> get(const std::string& key);
  /// Rank 0 only: keeps the store up until every other rank has called leave() (at most
  /// `timeout_seconds`), so that a rank still reading it is not cut off.
  void wait_for_leavers(double timeout_seconds);
  /// Says this rank no longer needs the store.
  void leave();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace maskprior::training
