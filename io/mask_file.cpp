#include "io/mask_file.h"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "core/error.h"
#include "io/input_file.h"
#include "io/json_file.h"
#include "io/npy.h"
#include "io/safetensors.h"

namespace maskprior {
namespace {

/// True when a grid of height × width (both positive, product without overflow) has `length`
/// cells.
bool grid_tiles(int64_t height, int64_t width, int64_t length) {
  int64_t cells = 0;
  return height > 0 && width > 0 && !__builtin_mul_overflow(height, width, &cells) &&
         cells == length;
}

using nlohmann::json;

constexpr std::string_view kMaskFormat = "mask/1";

template <typename T>
std::string_view as_bytes(const std::vector<T>& v) {
  return {reinterpret_cast<const char*>(v.data()), v.size() * sizeof(T)};
}

// ---------------------------------------------------------------------------------------------
// Writing

std::string format_number(double value) {
  return fmt::format("{}", value);
}

json params_json(const std::map<std::string, double>& params) {
  json out = json::object();
  for (const auto& [name, value] : params) {
    // Integer parameters stay integers, so Python reads `15`, not `15.0`.
    if (std::trunc(value) == value && std::abs(value) < 9.0e15) {
      out[name] = static_cast<int64_t>(value);
    } else {
      out[name] = value;
    }
  }
  return out;
}

json layout_json(const Layout& layout) {
  json spans = json::array();
  for (const Span& s : layout.spans) {
    json span = {{"name", s.name}, {"offset", s.offset}, {"length", s.length}};
    if (s.grid) span["grid"] = {s.grid->first, s.grid->second};
    if (s.digits) span["digits"] = digit_order_keyword(*s.digits);
    spans.push_back(std::move(span));
  }
  return spans;
}

void write_safetensors_mask(const CompiledMask& m, const std::string& path) {
  const std::vector<int64_t> shape{m.layers, m.heads, m.n, m.n};
  std::vector<TensorView> tensors{{"mask", "F32", shape, as_bytes(m.mask)},
                                  {"provenance", "I32", shape, as_bytes(m.provenance)}};
  if (m.hard) tensors.push_back({"hard", "U8", {m.n, m.n}, as_bytes(*m.hard)});
  const std::map<std::string, std::string> metadata{
      {"format", std::string(kMaskFormat)},     {"name", m.name},
      {"source_sha256", m.source_sha256},       {"layout", layout_json(m.layout).dump()},
      {"open", format_number(m.open_value)},    {"close", format_number(m.close_value)},
      {"params", params_json(m.params).dump()},
  };
  write_safetensors_views(path, std::move(tensors), metadata);
}

// ---------------------------------------------------------------------------------------------
// Reading

/// Parses one metadata value as a number; `what` names it in the error.
double parse_number(InputFile& file, const std::string& what, const std::string& text) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end) {
    file.corrupt(fmt::format("metadata '{}' = {} is not a number", what, quote_input(text)));
  }
  if (!std::isfinite(value)) {
    file.corrupt(fmt::format("metadata '{}' = {} is not a finite number", what, quote_input(text)));
  }
  return value;
}

json parse_metadata_json(InputFile& file, const std::string& key, const std::string& text) {
  try {
    return parse_json(text, fmt::format("metadata '{}'", key));
  } catch (const InputError& e) {
    file.corrupt(e.what());
  }
}

int64_t layout_int(InputFile& file, const json& span, const char* key) {
  const auto it = span.find(key);
  if (it == span.end() || !it->is_number_integer() || it->get<int64_t>() < 0) {
    file.corrupt(fmt::format("layout span {} needs a non-negative integer '{}'",
                             quote_input(span.dump()), key));
  }
  return it->get<int64_t>();
}

/// One span of the layout list, expected to start at `next_offset`.
Span parse_span(InputFile& file, const json& entry, int64_t next_offset) {
  if (!entry.is_object() || !entry.contains("name") || !entry["name"].is_string()) {
    file.corrupt(fmt::format("layout span {} has no name", quote_input(entry.dump())));
  }
  Span span;
  span.name = entry["name"].get<std::string>();
  span.offset = layout_int(file, entry, "offset");
  span.length = layout_int(file, entry, "length");
  if (span.offset != next_offset) {
    file.corrupt(fmt::format("layout span {} starts at {}, expected {}", quote_input(span.name),
                             span.offset, next_offset));
  }
  if (const auto grid = entry.find("grid"); grid != entry.end()) {
    if (!grid->is_array() || grid->size() != 2 || !(*grid)[0].is_number_integer() ||
        !(*grid)[1].is_number_integer() ||
        !grid_tiles((*grid)[0].get<int64_t>(), (*grid)[1].get<int64_t>(), span.length)) {
      file.corrupt(fmt::format("layout span {} has a grid {} that does not tile its {} tokens",
                               quote_input(span.name), quote_input(grid->dump()), span.length));
    }
    span.grid = std::pair{(*grid)[0].get<int64_t>(), (*grid)[1].get<int64_t>()};
  }
  if (const auto digits = entry.find("digits"); digits != entry.end()) {
    if (*digits == "lsb_first") {
      span.digits = DigitOrder::kLsbFirst;
    } else if (*digits == "msb_first") {
      span.digits = DigitOrder::kMsbFirst;
    } else {
      file.corrupt(
          fmt::format("layout span {} has digits {}, expected \"lsb_first\" or "
                      "\"msb_first\"",
                      quote_input(span.name), quote_input(digits->dump())));
    }
  }
  return span;
}

Layout parse_layout(InputFile& file, const std::string& text, int64_t n) {
  const json spans = parse_metadata_json(file, "layout", text);
  if (!spans.is_array()) file.corrupt("metadata 'layout' is not a JSON list");
  Layout layout;
  int64_t next_offset = 0;
  for (const json& entry : spans) {
    Span span = parse_span(file, entry, next_offset);
    next_offset += span.length;
    layout.spans.push_back(std::move(span));
  }
  if (next_offset != n) {
    file.corrupt(fmt::format("layout covers {} tokens but the mask has N = {}", next_offset, n));
  }
  return layout;
}

std::map<std::string, double> parse_params(InputFile& file, const std::string& text) {
  const json params = parse_metadata_json(file, "params", text);
  if (!params.is_object()) file.corrupt("metadata 'params' is not a JSON object");
  std::map<std::string, double> out;
  for (const auto& [name, value] : params.items()) {
    if (!value.is_number()) {
      file.corrupt(fmt::format("param {} is not a number", quote_input(name)));
    }
    if (!std::isfinite(value.get<double>())) {
      file.corrupt(
          fmt::format("param {} = {} is not a finite number", quote_input(name), value.dump()));
    }
    out[name] = value.get<double>();
  }
  return out;
}

const TensorEntry& require_tensor(InputFile& file, const SafetensorsHeader& header,
                                  const std::string& name, const std::string& dtype) {
  const auto it = header.tensors.find(name);
  if (it == header.tensors.end()) file.corrupt(fmt::format("no tensor '{}' in a mask file", name));
  if (it->second.dtype != dtype) {
    file.corrupt(
        fmt::format("tensor '{}' has dtype {}, expected {}", name, it->second.dtype, dtype));
  }
  return it->second;
}

const std::string& require_metadata(InputFile& file, const SafetensorsHeader& header,
                                    const std::string& key) {
  const auto it = header.metadata.find(key);
  if (it == header.metadata.end()) file.corrupt(fmt::format("metadata '{}' is missing", key));
  return it->second;
}

CompiledMask read_safetensors_mask(InputFile& file, uint64_t max_bytes) {
  const SafetensorsHeader header = read_safetensors_header(file, max_bytes);
  const std::string& format = require_metadata(file, header, "format");
  if (format != kMaskFormat) {
    file.corrupt(
        fmt::format("metadata 'format' is {}, expected '{}'", quote_input(format), kMaskFormat));
  }
  const TensorEntry& mask = require_tensor(file, header, "mask", "F32");
  const TensorEntry& provenance = require_tensor(file, header, "provenance", "I32");
  if (mask.shape.size() != 4 || mask.shape[2] != mask.shape[3] || mask.shape[0] < 1 ||
      mask.shape[1] < 1) {
    file.corrupt(fmt::format("tensor 'mask' has shape {}, expected [L, H, N, N] with L, H >= 1",
                             shape_text(mask.shape)));
  }
  if (provenance.shape != mask.shape) {
    file.corrupt(fmt::format("tensor 'provenance' has shape {}, but 'mask' has {}",
                             shape_text(provenance.shape), shape_text(mask.shape)));
  }

  CompiledMask m;
  m.layers = mask.shape[0];
  m.heads = mask.shape[1];
  m.n = mask.shape[2];
  m.name = require_metadata(file, header, "name");
  m.source_sha256 = require_metadata(file, header, "source_sha256");
  m.layout = parse_layout(file, require_metadata(file, header, "layout"), m.n);
  m.open_value = parse_number(file, "open", require_metadata(file, header, "open"));
  m.close_value = parse_number(file, "close", require_metadata(file, header, "close"));
  m.params = parse_params(file, require_metadata(file, header, "params"));

  const TensorEntry* hard = nullptr;
  if (header.tensors.count("hard") != 0) {
    hard = &require_tensor(file, header, "hard", "U8");
    if (hard->shape != std::vector<int64_t>{m.n, m.n}) {
      file.corrupt(fmt::format("tensor 'hard' has shape {}, expected [{}, {}]",
                               shape_text(hard->shape), m.n, m.n));
    }
  }
  read_tensor_into(file, mask, m.mask);
  read_tensor_into(file, provenance, m.provenance);
  if (hard) read_tensor_into(file, *hard, m.hard.emplace());
  return m;
}

/// A .npy mask: [L, H, N, N] or [N, N] float32, named after the file, one span `x` of N tokens.
CompiledMask read_npy_mask(InputFile& file, uint64_t max_bytes) {
  const NpyHeader header = read_npy_f32_header(file);
  std::vector<int64_t> shape = header.shape;
  if (shape.size() == 2) shape.insert(shape.begin(), {1, 1});
  if (shape.size() != 4 || shape[2] != shape[3] || shape[0] < 1 || shape[1] < 1) {
    file.corrupt(fmt::format("npy shape {} is not [L, H, N, N] or [N, N]", shape_text(shape)));
  }
  // In memory the mask also gets an int32 provenance: 8 bytes a cell, as `compile` counts them.
  if (const auto bytes = byte_count(shape, 8)) {
    file.check_claim(*bytes, max_bytes, "float32 mask and int32 provenance (in memory)");
  }
  std::vector<float> data = read_npy_f32_data(file, shape, header.data_start, max_bytes);

  CompiledMask m;
  m.name = std::filesystem::path(file.path()).stem().string();
  m.layers = shape[0];
  m.heads = shape[1];
  m.n = shape[2];
  Span whole;
  whole.name = "x";
  whole.length = m.n;
  m.layout.spans.push_back(std::move(whole));
  m.mask = std::move(data);
  // npy carries no provenance: every cell reads as "default" (0).
  allocate_or_throw(m.mask.size() * sizeof(int32_t), "the provenance of " + file.path(),
                    [&] { m.provenance.assign(m.mask.size(), 0); });
  return m;
}

}  // namespace

void write_mask_file(const CompiledMask& mask, const std::string& path, TensorFormat format) {
  check_invariants(mask);
  if (format == TensorFormat::kNpy) {
    write_npy_f32(path, {mask.layers, mask.heads, mask.n, mask.n}, as_bytes(mask.mask));
  } else {
    if (mask.provenance.empty()) {  // the file format has it: a reader expects it
      throw InputError(fmt::format(
          "cannot write '{}': mask '{}' was compiled without provenance, which a safetensors mask "
          "file holds; compile it with CompileOptions::provenance = true",
          path, mask.name));
    }
    write_safetensors_mask(mask, path);
  }
}

CompiledMask read_mask_file(const std::string& path, uint64_t max_bytes) {
  InputFile file(path);
  return is_npy(file) ? read_npy_mask(file, max_bytes) : read_safetensors_mask(file, max_bytes);
}

}  // namespace maskprior
