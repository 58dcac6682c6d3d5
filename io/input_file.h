// Checked reading of tensor files (safetensors, .npy): every read is range-checked against the
// file's size, and every failure is an InputError naming the file.
#pragma once

#include <bit>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace maskprior {

static_assert(std::endian::native == std::endian::little,
              "tensor files are little-endian; a big-endian host would need byte swapping");

/// The reference implementation refuses headers above 100 MB; so do we, before allocating.
inline constexpr uint64_t kMaxHeaderBytes = uint64_t{100} << 20;

/// A file opened for reading with its size; every read is checked.
class InputFile {
 public:
  /// Opens `path`; throws InputError if it cannot be read or is a directory.
  explicit InputFile(const std::string& path);

  uint64_t size() const { return size_; }
  const std::string& path() const { return path_; }

  /// Reads `count` bytes at `offset` into `out`; the caller has checked the range.
  void read_at(uint64_t offset, void* out, uint64_t count);
  /// Reads `count` bytes at `offset` as a string; the caller has checked the range.
  std::string read_string(uint64_t offset, uint64_t count);

  /// Throws InputError: "'PATH' is not a valid tensor file: WHAT".
  [[noreturn]] void corrupt(const std::string& what) const;

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  std::string path_;
  std::unique_ptr<std::FILE, Closer> file_;
  uint64_t size_ = 0;
};

/// Product of `shape` times `element_size`, or nullopt on a negative extent or overflow.
std::optional<uint64_t> byte_count(const std::vector<int64_t>& shape, uint64_t element_size);

/// `shape` as text for messages: "[2, 2, 4, 4]".
std::string shape_text(const std::vector<int64_t>& shape);

}  // namespace maskprior
