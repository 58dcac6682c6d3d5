// Checked reading of tensor files (safetensors, .npy): only regular files are opened (a FIFO or a
// device is refused before it can block), every read is range-checked against the file's size,
// what a header claims is checked against a byte cap before anything is allocated, and every
// failure is an InputError naming the file.
#pragma once

#include <bit>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "core/regular_file.h"

namespace maskprior {

static_assert(std::endian::native == std::endian::little,
              "tensor files are little-endian; a big-endian host would need byte swapping");

/// The reference implementation refuses headers above 100 MB; so do we, before allocating.
inline constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

/// "No cap" for the `max_bytes` of the readers.
inline constexpr uint64_t kNoByteLimit = std::numeric_limits<uint64_t>::max();

/// A file opened for reading with its size; every read is checked.
class InputFile {
 public:
  /// Opens `path`; throws InputError if it cannot be read or is not a regular file (a
  /// directory, a FIFO, a device).
  explicit InputFile(const std::string& path);

  uint64_t size() const { return file_.size(); }
  const std::string& path() const { return path_; }

  /// Reads `count` bytes at `offset` into `out`; the caller has checked the range.
  void read_at(uint64_t offset, void* out, uint64_t count);
  /// Reads `count` bytes at `offset` as a string; the caller has checked the range.
  std::string read_string(uint64_t offset, uint64_t count);

  /// Throws InputError: "'PATH' is not a valid tensor file: WHAT".
  [[noreturn]] void corrupt(const std::string& what) const;
  /// Throws InputError naming the file, `claimed` and `max_bytes` when `claimed` (what the header
  /// says `what` needs, e.g. "tensor data") is over `max_bytes`.
  void check_claim(uint64_t claimed, uint64_t max_bytes, const std::string& what) const;

 private:
  std::string path_;
  RegularFile file_;
};

/// Product of `shape` times `element_size`, or nullopt on a negative extent or overflow.
std::optional<uint64_t> byte_count(const std::vector<int64_t>& shape, uint64_t element_size);

/// `shape` as text for messages: "[2, 2, 4, 4]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace maskprior
