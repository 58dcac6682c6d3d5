// The options of one compile, below the passes that read them (declarations, the size check, the
// rule passes) so that no pass includes the pipeline's entry points (compiler/compile.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "core/layout.h"

namespace maskprior {

/// The most `max_bytes` may be, for every caller (`--max-bytes`, Python's `max_bytes`): a cap, not
/// a way to switch the cap (and the work limits proportional to it) off.
inline constexpr uint64_t kMaxBytesCeiling = uint64_t{64} << 30;

/// The largest magnitude an open or close value may have: the mask is float32.
inline constexpr double kMaxScaleValue = std::numeric_limits<float>::max();

/// Whether `value` may be an open or close value: finite, also as float32. One rule for a spec's
/// `scale`, `--open`/`--close` (a usage error), Python's `open=`/`close=` and every
/// CompileOptions (the compiler refuses an open_value or close_value that breaks it).
inline bool is_scale_value(double value) {
  return std::isfinite(value) && std::fabs(value) <= kMaxScaleValue;
}

/// Options of one compile: command-line overrides and the size cap.
struct CompileOptions {
  std::map<std::string, std::string> defines;  // -D NAME=VALUE (value text, parsed as EXPR literal)
  /// What messages call the value given for parameter NAME, and the one-line source its errors
  /// point into: maskc's `-D NAME` when empty (define_origin); the Python module's
  /// `params['NAME']`.
  std::function<std::string(const std::string& name)> name_define;
  std::optional<double> open_value;   // --open, overrides `scale open = ...`; is_scale_value
  std::optional<double> close_value;  // --close
  /// --digits SPAN=ORDER: the digit order of SPAN, as if the spec declared `digits SPAN ORDER`
  /// instead of what it declares (a task whose data puts the digits the other way round: `align`
  /// and `product` are defined by digit place). InputError for a span the spec lacks.
  std::map<std::string, DigitOrder> digit_orders;
  uint64_t max_bytes = uint64_t{4} << 30;  // refuse outputs larger than this (mask+provenance)
  /// Also build the provenance tensor (which rule wrote each cell): what `maskc compile` saves,
  /// `maskc show` and `.provenance` in Python show, and a run's learned mask keeps. A caller that
  /// reads only M and the hard mask (validate, report) turns it off: the compiler then writes one
  /// array of L·H·N·N cells instead of two (half the memory and about half the time at large N)
  /// and CompiledMask::provenance stays empty.
  bool provenance = true;
  /// Called before each rule application while the rules are unrolled and lowered (the long part
  /// of a large compile); it may throw to stop the compile, and the exception leaves the compiler
  /// as thrown. The Python module raises KeyboardInterrupt through it. Empty: never called.
  std::function<void()> check_cancelled;
  /// Called once with the declared size (layers, heads, tokens), after the max_bytes check and
  /// before anything is allocated; it may throw to refuse the spec (`maskc serve` refuses masks
  /// larger than its page draws). Empty: never called.
  std::function<void(int64_t layers, int64_t heads, int64_t n)> check_size;
};

/// How messages name the define of parameter `name`: `options.name_define`'s name, else `-D name`.
inline std::string define_origin(const CompileOptions& options, const std::string& name) {
  return options.name_define ? options.name_define(name) : "-D " + name;
}

}  // namespace maskprior
