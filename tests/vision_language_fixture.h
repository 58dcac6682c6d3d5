// Small data sets on disk for the vision and language tests: IDX files (gzipped with zlib) in the
// layout of the Debian package dataset-fashion-mnist, and folders of text files like fortunes'.
#pragma once

#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace maskprior::testing {

/// `bytes` gzip-compressed (one member), as zlib writes it.
inline std::string gzip_bytes(const std::string& bytes) {
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("deflateInit2 failed");
  }
  std::string out(deflateBound(&z, static_cast<uLong>(bytes.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (status != Z_STREAM_END) throw std::runtime_error("deflate failed");
  return out;
}

/// The bytes of an unsigned-byte IDX file with dimensions `dims` and values `data`.
inline std::string idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::string out = {0, 0, 0x08, static_cast<char>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out += static_cast<char>(d >> shift & 0xff);
  }
  out.append(data.begin(), data.end());
  return out;
}

inline void write_bytes(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// Images of `rows` examples whose class is visible: class c draws a bright 8×8 square at one of
/// ten places on a noisy background. Returns (pixels [rows·28·28], labels [rows]).
inline std::pair<std::vector<uint8_t>, std::vector<uint8_t>> toy_images(int rows, uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<uint8_t> pixels(static_cast<size_t>(rows) * 28 * 28), labels;
  for (int r = 0; r < rows; ++r) {
    const int label = r % 10;
    labels.push_back(static_cast<uint8_t>(label));
    const int top = 2 + (label / 5) * 12, left = 2 + (label % 5) * 4;
    for (int y = 0; y < 28; ++y) {
      for (int x = 0; x < 28; ++x) {
        const bool square = y >= top && y < top + 8 && x >= left && x < left + 8;
        pixels[(static_cast<size_t>(r) * 28 + static_cast<size_t>(y)) * 28 +
               static_cast<size_t>(x)] =
            static_cast<uint8_t>(square ? 200 + engine() % 56 : engine() % 40);
      }
    }
  }
  return {pixels, labels};
}

/// Writes the four gzipped Fashion-MNIST files of toy images into `dir`.
inline void write_toy_fashion_mnist(const std::filesystem::path& dir, int train_rows,
                                    int test_rows) {
  std::filesystem::create_directories(dir);
  for (const auto& [prefix, rows] : {std::pair{"train", train_rows}, {"t10k", test_rows}}) {
    const auto [pixels, labels] = toy_images(rows, rows);
    const auto n = static_cast<uint32_t>(rows);
    write_bytes(dir / (std::string(prefix) + "-images-idx3-ubyte.gz"),
                gzip_bytes(idx_bytes({n, 28, 28}, pixels)));
    write_bytes(dir / (std::string(prefix) + "-labels-idx1-ubyte.gz"),
                gzip_bytes(idx_bytes({n}, labels)));
  }
}

/// Writes `files` text files of about `bytes` bytes each into `dir`: fortune-like, repetitive
/// sentences that a tiny model learns quickly.
inline void write_toy_corpus(const std::filesystem::path& dir, int files, int bytes) {
  std::filesystem::create_directories(dir);
  const std::vector<std::string> lines = {"the cat sat on the mat.\n", "a dog ran in the fog.\n",
                                          "%\n", "to be or not to be.\n"};
  for (int f = 0; f < files; ++f) {
    std::string text;
    for (int i = f; static_cast<int>(text.size()) < bytes; ++i) {
      text += lines[static_cast<size_t>(i) % lines.size()];
    }
    write_bytes(dir / ("file" + std::to_string(f)), text);
  }
}

}  // namespace maskprior::testing
