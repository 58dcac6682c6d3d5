#include "serve/mask_reply.h"

#include <cstring>

#include "io/json_file.h"
#include "render/grid.h"

namespace maskprior::serve {

namespace {

void append_bytes(std::string& out, const void* data, size_t bytes) {
  out.append(static_cast<const char*>(data), bytes);
}

nlohmann::json spans_json(const Layout& layout) {
  nlohmann::json spans = nlohmann::json::array();
  for (const Span& span : layout.spans) {
    nlohmann::json entry = {{"name", span.name}, {"offset", span.offset}, {"length", span.length}};
    entry["grid"] = span.grid ? nlohmann::json::array({span.grid->first, span.grid->second})
                              : nlohmann::json(nullptr);
    spans.push_back(entry);
  }
  return spans;
}

}  // namespace

nlohmann::json mask_header(const CompiledMask& mask, int64_t layer, int64_t head) {
  nlohmann::json labels = nlohmann::json::array();
  for (int64_t t = 0; t < mask.n; ++t) labels.push_back(mask.layout.token_label(t));
  nlohmann::json warnings = nlohmann::json::array();
  for (const Diagnostic& warning : mask.warnings) warnings.push_back(format_diagnostic(warning));
  return {{"name", mask.name},
          {"layers", mask.layers},
          {"heads", mask.heads},
          {"n", mask.n},
          {"layer", layer},
          {"head", head},
          {"labels", labels},
          {"spans", spans_json(mask.layout)},
          {"params", mask.params},
          {"open", mask.open_value},
          {"close", mask.close_value},
          {"causal", mask.n > 1 && is_causal(mask)},
          {"hard", mask.hard.has_value()},
          {"has_provenance", !mask.provenance.empty()},
          {"warnings", warnings}};
}

std::string mask_reply_body(const CompiledMask& mask, int64_t layer, int64_t head,
                            const nlohmann::json& header) {
  check_layer_head(mask, layer, head);
  std::string text = json_text(header);
  text.append((4 - text.size() % 4) % 4, ' ');
  const auto cells = static_cast<size_t>(mask.n * mask.n);
  const size_t first = mask.index(layer, head, 0, 0);
  std::string out;
  out.reserve(4 + text.size() + cells * 9);
  const auto length = static_cast<uint32_t>(text.size());
  append_bytes(out, &length, sizeof length);  // x86-64 and ARM64 are little-endian
  out += text;
  append_bytes(out, mask.mask.data() + first, cells * sizeof(float));
  if (!mask.provenance.empty()) {
    append_bytes(out, mask.provenance.data() + first, cells * sizeof(int32_t));
  }
  if (mask.hard) append_bytes(out, mask.hard->data(), cells);
  return out;
}

}  // namespace maskprior::serve
