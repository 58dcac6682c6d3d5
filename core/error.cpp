#include "core/error.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

namespace maskprior {
namespace {

bool is_control(unsigned char c) {
  return c < 0x20 || c == 0x7f;
}

/// How many columns `c`, the byte at some position of a source line, takes once escaped: 4 for
/// an escaped control character, 0 for a UTF-8 continuation byte, else 1.
size_t escaped_width(unsigned char c) {
  if (c == '\t') return 1;
  if (is_control(c)) return 4;
  return (c & 0xc0) == 0x80 ? 0 : 1;
}

/// The line under the source line: spaces (tabs kept) up to the 1-based `column`, then `^`.
std::string caret_line(const std::string& source_line, int column) {
  std::string out;
  for (int i = 1; i < column && i - 1 < static_cast<int>(source_line.size()); ++i) {
    const auto c = static_cast<unsigned char>(source_line[static_cast<size_t>(i - 1)]);
    // Keep tabs so the caret lines up under tab-indented source.
    if (c == '\t') {
      out += '\t';
    } else {
      out.append(escaped_width(c), ' ');
    }
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
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (is_control(c) && c != '\t' && !(keep_newlines && c == '\n')) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += ch;
    }
  }
  return out;
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
