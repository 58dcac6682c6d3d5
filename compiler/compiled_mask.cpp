#include "compiler/compiled_mask.h"

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
      return s.name + "[" + std::to_string(t - s.offset) + "]";
    }
  }
  return "#" + std::to_string(t);
}

}  // namespace maskprior
