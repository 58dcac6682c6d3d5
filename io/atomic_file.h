// Atomic file writes: a temporary file in the target's folder, fsync, rename (then fsync of the
// folder). A failed or interrupted write never leaves a partial file at the target: a full disk
// (ENOSPC), a file size limit (EFBIG), a short write or a failing fsync is an InputError saying
// so, the temporary file is removed and the previous file, if any, is unchanged.
//
// Outputs and safety: the target must be missing or a regular file. A symbolic link is never
// followed nor replaced, and a directory, FIFO, device or socket is never replaced (all are an
// InputError); the temporary file is `TARGET.tmp-PID-XXXXXXXX`, removed on every failure, by
// remove_temp_files_on_signals' handlers when a signal ends the process, and by the next write
// of the same target when its process (PID) is gone. A file replaced keeps its permissions and
// (where the writer may set it) its group.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace maskprior {

/// Writes `bytes` to `path` via a temporary file in the same folder and a rename, so a failed or
/// interrupted write never leaves a partial file at `path`. Throws InputError naming the path,
/// also when `path` exists and is not a regular file (a symbolic link, FIFO, device, directory).
void write_file_atomic(const std::string& path, std::string_view bytes);
/// As above, writing the concatenation of `parts` (so large buffers need not be joined first).
void write_file_atomic(const std::string& path, const std::vector<std::string_view>& parts);

/// Appends `bytes` to `path` (created if missing; a regular file, as for write_file_atomic): all
/// of them or, when a write fails (a full disk, the file size limit), none — the file is cut
/// back to its old length. For logs of records such as metrics.jsonl. A process killed during
/// the write may still leave part of a record at the end; readers drop a last line cut short.
/// Throws InputError naming the path and why.
void append_file(const std::string& path, std::string_view bytes);

/// Installs handlers for SIGINT, SIGTERM and SIGHUP (those not ignored) that remove the
/// temporary files of the writes in progress, then end the process by the same signal, so the
/// exit status is the usual 128 + signal (130 for Ctrl-C, 143 for SIGTERM). For programs whose
/// signals should simply end them (maskc); a program with its own handlers does not call it.
void remove_temp_files_on_signals();

/// Removes the temporary files `NAME.tmp-PID-XXXXXXXX` of `path` (NAME is its file name) whose
/// PID is no process on this machine: leftovers of a writer that was killed (SIGKILL, a crash).
/// Returns how many were removed. write_file_atomic calls it before each write.
int remove_stale_temp_files(const std::string& path);

}  // namespace maskprior
