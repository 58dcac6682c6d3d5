// NumPy .npy files of little-endian float32 arrays in C order.
// Layout (v1.0): "\x93NUMPY", 1, 0, u16 header length, Python dict literal, data (C order);
// versions 2.0 and 3.0, read only, have a u32 header length.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "io/input_file.h"

namespace maskprior {

/// The v1.0 header of a C-order little-endian float32 array of `shape`: magic, version, length
/// and dict, padded with spaces and a newline so the data starts at a multiple of 64 bytes.
std::string npy_header(const std::vector<int64_t>& shape);

/// Writes a .npy file of `shape` whose float32 data is `data` (little-endian), atomically.
void write_npy_f32(const std::string& path, const std::vector<int64_t>& shape,
                   std::string_view data);

/// True when `file` starts with the .npy magic string.
bool is_npy(InputFile& file);

/// A .npy header as read: the array's shape and the file offset where its data starts.
struct NpyHeader {
  std::vector<int64_t> shape;
  uint64_t data_start = 0;
};

/// Reads the header of a .npy file (versions 1.0 to 3.0) and checks that it describes a C-order
/// little-endian float32 array. The data is checked by `read_npy_f32_data`.
NpyHeader read_npy_f32_header(InputFile& file);

/// The float32 data of an array of `shape` starting at `data_start`. Throws InputError unless the
/// rest of the file holds exactly that many bytes, and before allocating when they are more than
/// `max_bytes`.
std::vector<float> read_npy_f32_data(InputFile& file, const std::vector<int64_t>& shape,
                                     uint64_t data_start, uint64_t max_bytes = kNoByteLimit);

}  // namespace maskprior
