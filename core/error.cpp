#include "core/error.h"

#include <fmt/format.h>

namespace maskprior {

std::string format_diagnostic(const Diagnostic& d) {
  const char* kind = d.severity == Severity::kError ? "error" : "warning";
  std::string out;
  if (d.where.line > 0) {
    out = fmt::format("{}:{}:{}: {}: {}", d.where.file, d.where.line, d.where.column, kind,
                      d.message);
  } else if (!d.where.file.empty()) {
    out = fmt::format("{}: {}: {}", d.where.file, kind, d.message);
  } else {
    out = fmt::format("{}: {}", kind, d.message);
  }
  if (!d.source_line.empty()) {
    out += "\n  " + d.source_line + "\n  ";
    // Keep tabs so the caret lines up under tab-indented source.
    for (int i = 1; i < d.where.column && i - 1 < static_cast<int>(d.source_line.size()); ++i) {
      out += d.source_line[static_cast<size_t>(i - 1)] == '\t' ? '\t' : ' ';
    }
    out += '^';
  }
  return out;
}

SpecError::SpecError(Diagnostic d)
    : std::runtime_error(format_diagnostic(d)), diagnostic_(std::move(d)) {}

}  // namespace maskprior
