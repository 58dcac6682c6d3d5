// A rendezvous through a file, for processes on one machine (or on a shared file system): the
// c10d FileStore at PATH, in a folder only this user can enter, so no other machine (and no
// other user) can read or write the run's keys — unlike LibTorch 1.13's TCPStore, which listens
// on every interface without authentication. docs/distributed.md.
//
// Rank 0 owns PATH: it refuses a PATH another live job's rank 0 holds, clears what an earlier job
// left there, and then publishes PATH.rank0 (created under a temporary name, renamed into place)
// while it holds an open-file-description lock on it for as long as it lives. A file that is there
// and locked therefore always means "rank 0 is alive and PATH is fresh": the other ranks wait for
// it before they touch PATH, and watch it to learn at once that rank 0 has died. No LibTorch here.
#pragma once

#include <string>

namespace maskprior::training {

/// The private folder of this user's rendezvous files on this machine: maskc-UID under
/// $XDG_RUNTIME_DIR, else $TMPDIR, else /tmp; created with mode 0700. InputError if it cannot be
/// created, or if it is a symlink, another user's, or open to others (someone else made it).
std::string private_rendezvous_folder();

/// Checks that `path` can hold a rendezvous: its folder exists and is not writable by every user
/// (a world-writable folder would let anyone replace the files). InputError naming the path.
void check_rendezvous_path(const std::string& path);

/// This process's part in a file rendezvous; held for as long as the process uses the store.
class RendezvousFile {
 public:
  /// Rank 0: takes PATH over (InputError if another live rank 0 holds it) and publishes
  /// PATH.rank0. Other ranks: wait, at most `timeout_seconds`, until rank 0 has published it
  /// (InputError saying so after the timeout).
  RendezvousFile(std::string path, int rank, int world_size, double timeout_seconds);
  /// Rank 0 withdraws PATH.rank0 (the lock ends with the file description in any case, even on
  /// SIGKILL).
  ~RendezvousFile();
  RendezvousFile(const RendezvousFile&) = delete;
  RendezvousFile& operator=(const RendezvousFile&) = delete;

  /// The c10d FileStore's file.
  const std::string& store_path() const { return path_; }
  /// Whether rank 0 still holds PATH.rank0 (false once it has ended, however it ended).
  bool rank0_alive() const;

 private:
  std::string path_;
  int fd_ = -1;  // rank 0: the locked PATH.rank0
};

}  // namespace maskprior::training
