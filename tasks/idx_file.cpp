#include "tasks/idx_file.h"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "core/regular_file.h"

namespace maskprior::tasks {

namespace {

constexpr uint8_t kUnsignedByte = 0x08;
constexpr size_t kMaxIdxDims = 4;
constexpr size_t kInflateChunk = size_t{1} << 20;

[[noreturn]] void not_gzip(const std::string& name, const std::string& what) {
  throw InputError(fmt::format("{} is not a valid gzip file: {}", quote_input(name), what));
}

[[noreturn]] void not_idx(const std::string& name, const std::string& what) {
  throw InputError(fmt::format("{} is not a valid IDX file: {}", quote_input(name), what));
}

/// Frees a z_stream on every path out of gunzip.
struct Inflater {
  z_stream stream{};
  bool ready = false;
  ~Inflater() {
    if (ready) inflateEnd(&stream);
  }
};

uint32_t big_endian_u32(std::string_view bytes, size_t at) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value = value << 8 | static_cast<uint8_t>(bytes[at + i]);
  return value;
}

}  // namespace

std::string gunzip(std::string_view compressed, uint64_t max_bytes, const std::string& name) {
  if (compressed.size() > std::numeric_limits<uInt>::max()) {
    not_gzip(name, "over 4 GiB compressed");
  }
  Inflater z;
  // 16 + MAX_WBITS: a gzip header and trailer (not raw deflate or zlib).
  if (inflateInit2(&z.stream, 16 + MAX_WBITS) != Z_OK) {
    throw InternalError("gunzip: inflateInit2 failed");
  }
  z.ready = true;
  z.stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(compressed.data()));
  z.stream.avail_in = static_cast<uInt>(compressed.size());
  std::string out;
  int status = Z_OK;
  while (status != Z_STREAM_END) {
    // Room for one byte past the cap: a stream that fills it is over the cap.
    const size_t before = out.size();
    const auto room =
        static_cast<size_t>(std::min<uint64_t>(kInflateChunk, max_bytes + 1 - before));
    out.resize(before + room);
    z.stream.next_out = reinterpret_cast<Bytef*>(out.data() + before);
    z.stream.avail_out = static_cast<uInt>(room);
    status = inflate(&z.stream, Z_NO_FLUSH);
    out.resize(before + room - z.stream.avail_out);
    if (out.size() > max_bytes) {
      not_gzip(name, fmt::format("it inflates to more than {}", byte_size_text(max_bytes)));
    }
    if (status == Z_BUF_ERROR && z.stream.avail_in == 0) {
      not_gzip(name, "it ends before its end of stream (truncated)");
    }
    if (status != Z_OK && status != Z_STREAM_END) {
      not_gzip(name, z.stream.msg ? z.stream.msg : fmt::format("zlib error {}", status));
    }
  }
  if (z.stream.avail_in != 0) {
    not_gzip(name, fmt::format("{} bytes follow the end of its stream", z.stream.avail_in));
  }
  return out;
}

IdxArray parse_idx(std::string_view bytes, const std::string& name) {
  if (bytes.size() < 4) not_idx(name, fmt::format("{} bytes, shorter than a header", bytes.size()));
  if (bytes[0] != 0 || bytes[1] != 0) not_idx(name, "it does not start with two zero bytes");
  const auto type = static_cast<uint8_t>(bytes[2]);
  if (type != kUnsignedByte) {
    not_idx(name, fmt::format("element type 0x{:02x}; only unsigned bytes (0x08) are read", type));
  }
  const auto rank = static_cast<size_t>(static_cast<uint8_t>(bytes[3]));
  if (rank == 0 || rank > kMaxIdxDims) {
    not_idx(name, fmt::format("{} dimensions (expected 1 to {})", rank, kMaxIdxDims));
  }
  const size_t header = 4 + 4 * rank;
  if (bytes.size() < header) {
    not_idx(name, fmt::format("{} bytes, shorter than its header of {}", bytes.size(), header));
  }
  IdxArray array;
  uint64_t count = 1;
  for (size_t d = 0; d < rank; ++d) {
    const uint32_t extent = big_endian_u32(bytes, 4 + 4 * d);
    // Each factor is below 2^32: the product overflows only past 2^64, checked before it does.
    if (extent != 0 && count > std::numeric_limits<uint64_t>::max() / extent) {
      not_idx(name, "the product of its dimensions overflows");
    }
    count *= extent;
    array.dims.push_back(extent);
  }
  const uint64_t body = bytes.size() - header;
  if (count != body) {
    not_idx(name, fmt::format("its header claims {} values but {} bytes follow it", count, body));
  }
  array.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(header), bytes.end());
  return array;
}

IdxArray read_idx_file(const std::string& path, uint64_t max_bytes) {
  if (path.ends_with(".gz")) {
    const std::string compressed =
        read_regular_file(path, std::min(max_bytes, kMaxGzipFileBytes), "IDX file");
    return parse_idx(gunzip(compressed, max_bytes, path), path);
  }
  return parse_idx(read_regular_file(path, max_bytes, "IDX file"), path);
}

}  // namespace maskprior::tasks
