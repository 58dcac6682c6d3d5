#include "io/input_file.h"

#include <fmt/format.h>

#include <limits>

#include "core/error.h"

namespace maskprior {

InputFile::InputFile(const std::string& path) : path_(path), file_(path, "tensor file") {}

void InputFile::read_at(uint64_t offset, void* out, uint64_t count) {
  file_.read_at(offset, out, count);
}

std::string InputFile::read_string(uint64_t offset, uint64_t count) {
  std::string text(count, '\0');
  read_at(offset, text.data(), count);
  return text;
}

void InputFile::corrupt(const std::string& what) const {
  throw InputError(fmt::format("'{}' is not a valid tensor file: {}", path_, what),
                   SourceLocation{path_});
}

void InputFile::check_claim(uint64_t claimed, uint64_t max_bytes, const std::string& what) const {
  if (claimed <= max_bytes) return;
  throw InputError(
      fmt::format("cannot read '{}': its header claims {} bytes of {}, over the limit of {}", path_,
                  claimed, what, byte_size_text(max_bytes)),
      SourceLocation{path_});
}

std::optional<uint64_t> byte_count(const std::vector<int64_t>& shape, uint64_t element_size) {
  uint64_t total = element_size;
  for (int64_t extent : shape) {
    if (extent < 0) return std::nullopt;
    const auto e = static_cast<uint64_t>(extent);
    if (e != 0 && total > std::numeric_limits<uint64_t>::max() / e) return std::nullopt;
    total *= e;
  }
  return total;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

}  // namespace maskprior
