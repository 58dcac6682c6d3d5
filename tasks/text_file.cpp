#include "tasks/text_file.h"

#include <fmt/format.h>

#include <utility>

#include "core/text.h"

namespace maskprior::tasks {
namespace {

constexpr size_t kMaxShownLine = 200;  // longer lines are left out of diagnostics

/// The 0-based offset in `line` of the first byte that is not text (see check_text_line) and its
/// length (1, or 2 for a C1 control), or line.size() when it is all text.
std::pair<size_t, size_t> first_non_text(std::string_view line) {
  for (size_t i = 0; i < line.size();) {
    const size_t length = utf8_length(line, i);
    const auto b0 = static_cast<unsigned char>(line[i]);
    if (length == 0) return {i, 1};
    if (length == 1 && (b0 < 0x20 || b0 == 0x7f) && b0 != '\t' && b0 != '\r') return {i, 1};
    if (length == 2 && b0 == 0xc2 && static_cast<unsigned char>(line[i + 1]) < 0xa0) return {i, 2};
    i += length;
  }
  return {line.size(), 0};
}

}  // namespace

SpecError text_error(const std::string& path, int line, int column, const std::string& message,
                     std::string_view source_line) {
  Diagnostic d;
  d.where = {path, line, column};
  d.message = message;
  if (source_line.size() <= kMaxShownLine) d.source_line = std::string(source_line);
  return SpecError(std::move(d));
}

SpecError file_error(const std::string& path, const std::string& message) {
  Diagnostic d;
  d.where.file = path;
  d.message = message;
  return SpecError(std::move(d));
}

void check_text_line(const std::string& path, int number, std::string_view line,
                     std::string_view kind) {
  const auto [at, length] = first_non_text(line);
  if (at == line.size()) return;
  const auto b0 = static_cast<unsigned char>(line[at]);
  std::string what;
  if (length == 2) {
    what = fmt::format("the control character U+{:04X} is not text",
                       static_cast<unsigned char>(line[at + 1]));
  } else if (b0 < 0x20 || b0 == 0x7f) {
    what = fmt::format("the control character 0x{:02x}{} is not text", b0, b0 == 0 ? " (NUL)" : "");
  } else {
    what = fmt::format("byte 0x{:02x} is not UTF-8", b0);
  }
  // NUL bytes throughout, or 0xff 0xfe at the start, are what UTF-16 text looks like.
  const bool utf16 = b0 == 0 || (number == 1 && at == 0 && line.starts_with("\xff\xfe"));
  throw text_error(path, number, static_cast<int>(at) + 1,
                   fmt::format("{} (a {} must be UTF-8 text{})", what, kind,
                               utf16 ? "; is this UTF-16, or a binary file?" : ""),
                   line);
}

void blank_byte_order_mark(std::string& text) {
  if (text.starts_with("\xef\xbb\xbf")) text.replace(0, 3, "   ");
}

}  // namespace maskprior::tasks
