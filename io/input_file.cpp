#include "io/input_file.h"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cerrno>
#include <limits>
#include <system_error>

#include "core/error.h"

namespace maskprior {
namespace {

std::string system_message(int error) {
  return std::generic_category().message(error);
}

}  // namespace

InputFile::InputFile(const std::string& path) : path_(path) {
  file_.reset(std::fopen(path.c_str(), "rb"));
  if (!file_) {
    throw InputError(fmt::format("cannot read '{}': {}", path, system_message(errno)));
  }
  struct stat info {};
  if (::fstat(::fileno(file_.get()), &info) != 0) {
    throw InputError(fmt::format("cannot read '{}': {}", path, system_message(errno)));
  }
  if (S_ISDIR(info.st_mode)) {
    throw InputError(fmt::format("cannot read '{}': it is a directory", path));
  }
  size_ = static_cast<uint64_t>(info.st_size);
}

void InputFile::read_at(uint64_t offset, void* out, uint64_t count) {
  if (count == 0) return;
  if (::fseeko(file_.get(), static_cast<off_t>(offset), SEEK_SET) != 0 ||
      std::fread(out, 1, count, file_.get()) != count) {
    throw InputError(fmt::format("cannot read '{}': read of {} bytes at offset {} failed", path_,
                                 count, offset));
  }
}

std::string InputFile::read_string(uint64_t offset, uint64_t count) {
  std::string text(count, '\0');
  read_at(offset, text.data(), count);
  return text;
}

void InputFile::corrupt(const std::string& what) const {
  throw InputError(fmt::format("'{}' is not a valid tensor file: {}", path_, what));
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
