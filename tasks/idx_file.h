// IDX files (the MNIST format), plain or gzip-compressed: a big-endian header — two zero bytes,
// a type byte (0x08 = unsigned byte), the number of dimensions — then one big-endian uint32 per
// dimension and the data. Only unsigned-byte arrays are read (images and labels). Every size is
// checked before it is used: a gzip stream is inflated up to a cap, the product of the dimensions
// is overflow-checked and must equal the bytes that follow the header exactly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace maskprior::tasks {

/// Decompressed bytes of one IDX file at most (Fashion-MNIST's training images: 47 MB).
inline constexpr uint64_t kMaxIdxBytes = uint64_t{256} << 20;
/// Bytes of a compressed file at most (read whole before inflating).
inline constexpr uint64_t kMaxGzipFileBytes = uint64_t{128} << 20;

/// An unsigned-byte IDX array: its dimensions and its values in row-major order.
struct IdxArray {
  std::vector<int64_t> dims;
  std::vector<uint8_t> data;
};

/// Inflates a gzip stream (one member; trailing bytes are refused) of at most `max_bytes`
/// decompressed bytes. InputError "'NAME' is not a valid gzip file: ..." otherwise.
std::string gunzip(std::string_view compressed, uint64_t max_bytes, const std::string& name);

/// Parses the bytes of an IDX file; `name` names it in errors ("'NAME' is not a valid IDX file:
/// ..."). Refuses a type other than unsigned byte, zero dimensions or more than 4, and a size
/// that disagrees with the header.
IdxArray parse_idx(std::string_view bytes, const std::string& name);

/// Reads an IDX file from `path`: gunzipped when its name ends in `.gz`. Only a regular file is
/// read (core/regular_file.h); errors name the path.
IdxArray read_idx_file(const std::string& path, uint64_t max_bytes = kMaxIdxBytes);

}  // namespace maskprior::tasks
