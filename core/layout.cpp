#include "core/layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace maskprior {

int64_t Layout::size() const {
  int64_t n = 0;
  for (const Span& s : spans) n += s.length;
  return n;
}

const Span* Layout::find(const std::string& name) const {
  for (const Span& s : spans) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string Layout::token_label(int64_t t) const {
  for (const Span& s : spans) {
    if (t >= s.offset && t < s.offset + s.length) {
      if (s.length == 1) return s.name;
      return fmt::format("{}[{}]", s.name, t - s.offset);
    }
  }
  return fmt::format("#{}", t);
}

std::string layout_text(const Layout& layout) {
  std::vector<std::string> parts;
  for (const Span& s : layout.spans) {
    parts.push_back(s.length == 1 ? s.name : fmt::format("{}[{}]", s.name, s.length));
  }
  return fmt::format("`{}` (N = {})", fmt::join(parts, ", "), layout.size());
}

bool same_spans(const Layout& a, const Layout& b) {
  if (a.spans.size() != b.spans.size()) return false;
  for (size_t i = 0; i < a.spans.size(); ++i) {
    if (a.spans[i].name != b.spans[i].name || a.spans[i].length != b.spans[i].length) return false;
  }
  return true;
}

Layout make_layout(const std::vector<std::pair<std::string, int64_t>>& spans) {
  Layout layout;
  int64_t offset = 0;
  for (const auto& [name, length] : spans) {
    layout.spans.push_back({name, offset, length, std::nullopt, std::nullopt});
    offset += length;
  }
  return layout;
}

}  // namespace maskprior
