// The result of compiling a .mask spec: raw logits M [L, H, N, N], provenance, hard mask, layout.
// This is the contract between the compiler, the tensor files, the validator and the runtime.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "compiler/error.h"

namespace maskprior {

enum class DigitOrder { kLsbFirst, kMsbFirst };

/// A named run of tokens in the sequence layout (`cls` is a span of length 1).
struct Span {
  std::string name;
  int64_t offset = 0;  // index of the span's first token in the sequence
  int64_t length = 0;
  std::optional<std::pair<int64_t, int64_t>> grid;  // (H, W), row-major, from `grid SPAN H x W`
  std::optional<DigitOrder> digits;                  // from `digits SPAN lsb_first|msb_first`
};

/// The sequence layout, spans in order; N = sum of lengths.
struct Layout {
  std::vector<Span> spans;

  int64_t size() const;
  /// The span called `name`, or nullptr.
  const Span* find(const std::string& name) const;
  /// Label of token t for display: `cls`, `x[3]` (a length-1 span prints bare).
  std::string token_label(int64_t t) const;
};

/// A compiled spec. Tensors are dense, row-major, float32/int32/uint8 as in LANGUAGE.md "Output".
struct CompiledMask {
  std::string name;            // from `mask NAME`
  std::string source_sha256;   // hex digest of the spec's bytes
  int64_t layers = 1;
  int64_t heads = 1;
  int64_t n = 0;               // tokens; equals layout.size()
  Layout layout;
  double open_value = 10.0;    // the values `open` / `close` wrote (after --open/--close)
  double close_value = -10.0;
  std::map<std::string, double> params;  // resolved parameter values

  std::vector<float> mask;          // [L, H, N, N]: M, row = query, column = key
  std::vector<int32_t> provenance;  // [L, H, N, N]: 1-based source line of last writer, 0 = default
  std::optional<std::vector<uint8_t>> hard;  // [N, N]: 1 = hard-excluded; present iff spec has `hard`

  std::vector<Diagnostic> warnings;  // compiler warnings (not saved in tensor files)

  size_t index(int64_t layer, int64_t head, int64_t q, int64_t k) const {
    return static_cast<size_t>(((layer * heads + head) * n + q) * n + k);
  }
  float at(int64_t layer, int64_t head, int64_t q, int64_t k) const {
    return mask[index(layer, head, q, k)];
  }
  bool is_hard(int64_t q, int64_t k) const {
    return hard.has_value() && (*hard)[static_cast<size_t>(q * n + k)] != 0;
  }
};

/// Options of one compile: command-line overrides and the size cap.
struct CompileOptions {
  std::map<std::string, std::string> defines;  // -D NAME=VALUE (value text, parsed as EXPR literal)
  std::optional<double> open_value;             // --open, overrides `scale open = ...`
  std::optional<double> close_value;            // --close
  uint64_t max_bytes = uint64_t{4} << 30;       // refuse outputs larger than this (mask+provenance)
};

/// Compiles spec text; `filename` is used in diagnostics. Throws SpecError on the first error.
CompiledMask compile_source(const std::string& source, const std::string& filename,
                            const CompileOptions& options = {});

/// Reads and compiles a .mask file. Throws InputError if unreadable, SpecError if malformed.
CompiledMask compile_file(const std::string& path, const CompileOptions& options = {});

}  // namespace maskprior
