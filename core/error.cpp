#include "core/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/text.h"

namespace maskprior {
namespace {

/// The line under the source line: as many columns as `source_line`'s first `column` - 1 bytes
/// take once escaped (one per character of printable_utf8's text, tabs kept), then `^`. So the
/// caret stands under the character at `column` however many escapes come before it.
std::string caret_line(const std::string& source_line, int column) {
  const size_t before = std::min(static_cast<size_t>(std::max(column, 1) - 1), source_line.size());
  const std::string shown = printable_utf8(std::string_view(source_line).substr(0, before));
  std::string out;
  for (size_t i = 0; i < shown.size(); i += utf8_length(shown, i)) {
    out += shown[i] == '\t' ? '\t' : ' ';
  }
  return out + '^';
}

/// The part of a long source line around the 1-based `column` that a diagnostic shows (at most
/// about 2 × kContext bytes, "…" where it is cut), and the column there; short lines are whole.
constexpr size_t kContext = 60;
std::pair<std::string, int> excerpt(const std::string& line, int column) {
  if (line.size() <= 2 * kContext + 40) return {line, column};
  const size_t at = std::min(static_cast<size_t>(std::max(column, 1) - 1), line.size());
  auto char_start = [&](size_t i) {  // back to the start of a UTF-8 character
    while (i > 0 && i < line.size() && (static_cast<unsigned char>(line[i]) & 0xc0) == 0x80) --i;
    return i;
  };
  const size_t begin = char_start(at > kContext ? at - kContext : 0);
  const size_t end = char_start(std::min(line.size(), at + kContext));
  const std::string before = begin > 0 ? "…" : "";
  std::string shown = before + line.substr(begin, end - begin) + (end < line.size() ? "…" : "");
  return {shown, static_cast<int>(before.size() + (at - begin)) + 1};
}

}  // namespace

std::string escape_control_chars(std::string_view text, bool keep_newlines) {
  return printable_utf8(text, keep_newlines);
}

std::string quote_input(std::string_view text, size_t max) {
  if (text.size() <= max) return fmt::format("'{}'", escape_control_chars(text));
  size_t cut = max;
  // Back up to the start of a UTF-8 character.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  return fmt::format("'{}…' ({} bytes)", escape_control_chars(text.substr(0, cut)), text.size());
}

std::string format_diagnostic(const Diagnostic& d) {
  const char* kind = d.severity == Severity::kError ? "error" : "warning";
  const std::string file = escape_control_chars(d.where.file);
  const std::string message = escape_control_chars(d.message);
  std::string out;
  if (d.where.line > 0) {
    out = fmt::format("{}:{}:{}: {}: {}", file, d.where.line, d.where.column, kind, message);
  } else if (!file.empty()) {
    out = fmt::format("{}: {}: {}", file, kind, message);
  } else {
    out = fmt::format("{}: {}", kind, message);
  }
  if (!d.source_line.empty()) {
    const auto [shown, column] = excerpt(d.source_line, d.where.column);
    out += "\n  " + escape_control_chars(shown) + "\n  " + caret_line(shown, column);
  }
  return out;
}

void throw_cannot_allocate(uint64_t bytes, std::string_view what) {
  throw InputError(fmt::format("cannot allocate {} bytes ({:.1f} GiB) for {}: out of memory", bytes,
                               static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0), what));
}

SpecError::SpecError(Diagnostic d)
    : std::runtime_error(format_diagnostic(d)), diagnostic_(std::move(d)) {}

}  // namespace maskprior
