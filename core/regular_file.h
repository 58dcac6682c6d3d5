// Reading input files without trusting them: only regular files are read (a FIFO with no writer
// would block forever, /dev/zero would stream until memory runs out, a directory has no bytes),
// and never more than a stated number of bytes.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace maskprior {

/// A regular file opened for reading: its descriptor (closed with the object) and its size.
class RegularFile {
 public:
  /// Opens `path` with O_NONBLOCK (so that opening a FIFO cannot block), then refuses anything
  /// but a regular file. `what` names the file in messages ("spec", "truth table"; "" for none).
  /// InputError "cannot read WHAT 'PATH': REASON" (no such file, permission, "it is not a regular
  /// file (a FIFO)", ...).
  RegularFile(const std::string& path, std::string_view what);
  ~RegularFile();
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;

  int fd() const { return fd_; }
  /// The size fstat reported when the file was opened.
  uint64_t size() const { return size_; }

  /// Reads exactly `count` bytes at `offset`; InputError naming the file on a short read.
  void read_at(uint64_t offset, void* out, uint64_t count) const;
  /// Reads from the start up to the end of the file, at most `max_bytes`; InputError naming the
  /// file and the limit if it is larger (by its size, or by what it turns out to hold).
  std::string read_all(uint64_t max_bytes) const;

  /// Throws InputError "cannot read WHAT 'PATH': MESSAGE".
  [[noreturn]] void fail(const std::string& message) const;

 private:
  std::string path_;
  std::string what_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// What a file of type `mode` (st_mode) that is not a regular file is, for messages: "a FIFO",
/// "a directory", "a character device", ...
const char* file_kind(mode_t mode);

/// The whole regular file `path`, refused (InputError naming it) if it is not a regular file or
/// holds more than `max_bytes`. `what` names the file in messages, as for RegularFile.
std::string read_regular_file(const std::string& path, uint64_t max_bytes, std::string_view what);

/// `bytes` for messages: "16 MiB" when a whole number of MiB or GiB, else "123 bytes".
std::string byte_size_text(uint64_t bytes);

}  // namespace maskprior
