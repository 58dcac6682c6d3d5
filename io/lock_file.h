// One process at a time per output folder: `maskc train --out DIR` and `maskc reproduce` hold an
// exclusive lock (flock) on DIR/.lock while they run, so two processes never write the same
// run folder or suite folder. The lock file is removed when the lock is released (the command
// ended: finished, failed, or stopped by a signal it handles); the lock itself ends with the
// process however it ends, so a lock file left by a process killed outright (SIGKILL) is no stale
// lock: the next command takes it. A process forked while the lock is held (a sweep's or a
// suite's run) does not hold it: the lock ends with its holder even while such children run.
#pragma once

#include <string>

namespace maskprior {

inline constexpr const char* kLockFileName = ".lock";

/// An exclusive lock on a folder, held for the object's lifetime.
class FolderLock {
 public:
  /// Creates `folder` if it is missing and locks it. Throws InputError when another process
  /// holds the lock: "DIR is in use by process PID; wait for it or choose another --out", or when
  /// the folder cannot be created or the lock file not be written (naming the path and why).
  /// An empty `folder` locks nothing (a run without --out).
  explicit FolderLock(const std::string& folder);
  /// Removes the lock file and releases the lock. A folder this lock created is removed again if
  /// nothing but the lock file was in it (the command failed before writing anything), with the
  /// parents it created, so a refused run leaves no folder.
  ~FolderLock();
  FolderLock(const FolderLock&) = delete;
  FolderLock& operator=(const FolderLock&) = delete;

 private:
  std::string folder_;
  std::string lock_path_;
  int fd_ = -1;
  bool created_ = false;
  std::string created_root_;  // the outermost folder the constructor created, absolute
};

}  // namespace maskprior
