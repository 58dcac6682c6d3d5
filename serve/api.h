// What `maskc serve` answers, without HTTP: each request is a function from its body or query
// to a Reply, so the server (serve/server.cpp) only routes and the answers are testable alone.
// Every answer reads and writes only under the served folder (serve/paths.h), compiles with
// `maskc compile`'s caps (CompileOptions::max_bytes, kMaxSpecBytes) and within a time limit.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "compiler/compile.h"
#include "serve/paths.h"

namespace maskprior::serve {

struct ServeOptions {
  std::string dir;           // the served folder
  std::string examples_dir;  // the shipped specs (share/maskprior/specs); "" for none
  uint64_t max_bytes = CompileOptions{}.max_bytes;  // as `maskc compile --max-bytes`
  double time_limit_s = 20;                         // per compile or validation
  int64_t max_page_tokens = 2048;                   // the largest mask the page draws
  /// Whether the server is stopping: compiles and validations in progress then end with a 503.
  /// Empty: never.
  std::function<bool()> stopping;
};

/// One answer: status, content type and body.
struct Reply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

/// The request query (`?path=...&layer=0`).
using Query = std::map<std::string, std::string>;

/// `text` with every `ROOT/` cut out: messages and reports name files under the served folder
/// relative to it, as the page names them, and never show where the folder is.
std::string without_root(std::string text, const std::filesystem::path& root);

class Api {
 public:
  explicit Api(ServeOptions options);
  const ServedDir& dir() const { return dir_; }

  /// GET /api/info: the served folder's name, its specs and truth tables, the shipped examples,
  /// the built-in tasks of `maskc validate --task`.
  Reply info() const;
  /// GET /api/file?path=P (a spec or table under DIR) and /api/example?name=E (a shipped spec).
  Reply file(const Query& query) const;
  Reply example(const Query& query) const;
  /// POST /api/compile {source, file, params, layer, head}: a binary reply (compile_reply) of one
  /// (layer, head), or 422 with the diagnostic `maskc compile` prints.
  Reply compile(const std::string& body) const;
  /// POST /api/validate {source, file, params, task | truth_table}: the report `maskc validate`
  /// prints, as text, and whether it passed.
  Reply validate(const std::string& body) const;
  /// POST /api/save {path, source}: writes the spec atomically under DIR (a .mask file).
  Reply save(const std::string& body) const;
  /// GET /api/runs: every run folder under DIR, one row each; /api/run?path=R: its curves;
  /// /api/run_mask?path=R&layer=L&head=H: its learned mask minus its initial value (binary).
  Reply runs() const;
  Reply run(const Query& query) const;
  Reply run_mask(const Query& query) const;
  /// GET /api/reports: the REPORT.md files under DIR and their plots; /api/raw?path=P: a .md or
  /// .png file under DIR as it is.
  Reply reports() const;
  Reply raw(const Query& query) const;

 private:
  /// Throws a 503 once the server stops, or `what` (a compile, a validation) has run past the
  /// time limit counted from now.
  std::function<void()> deadline_check(const char* what) const;
  CompileOptions compile_options(const std::map<std::string, std::string>& defines,
                                 const char* what = "compile") const;
  ServeOptions options_;
  ServedDir dir_;
};

}  // namespace maskprior::serve
