#include "serve/api.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "core/regular_file.h"
#include "io/atomic_file.h"
#include "io/json_file.h"
#include "runfolder/run_files.h"
#include "serve/mask_reply.h"
#include "tasks/arithmetic_task.h"
#include "tasks/boolean_task.h"
#include "validate/validate.h"

namespace maskprior::serve {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json parse_body(const std::string& body) {
  // At most kMaxJsonDepth deep, as every JSON maskc reads; InputError: a 400 (server.cpp).
  json request = parse_json(body, "malformed request");
  if (!request.is_object()) throw RequestError(400, "the request body is no JSON object");
  return request;
}

/// The spec text of a request, within the size `maskc compile` reads.
std::string source_of(const json& request) {
  std::string source = request.at("source").get<std::string>();
  if (source.size() > kMaxSpecBytes) {
    throw RequestError(413, fmt::format("the spec has {} bytes; maskc compiles specs of at most {}",
                                        source.size(), byte_size_text(kMaxSpecBytes)));
  }
  return source;
}

/// `params` {name: number or text} as -D values; a list or object as a value is refused.
std::map<std::string, std::string> defines_of(const json& request) {
  std::map<std::string, std::string> defines;
  if (!request.contains("params")) return defines;
  const json& params = request.at("params");
  if (!params.is_object()) throw RequestError(400, "params is an object {name: value}");
  for (const auto& [name, value] : params.items()) {
    if (value.is_structured()) {
      throw RequestError(400, fmt::format("params.{}: a value is a number or text",
                                          escape_control_chars(name, true)));
    }
    defines[name] = value.is_string() ? value.get<std::string>() : value.dump();
  }
  return defines;
}

Reply text_reply(std::string body, const char* type = "text/plain; charset=utf-8") {
  return Reply{200, type, std::move(body)};
}

}  // namespace

std::string without_root(std::string text, const fs::path& root) {
  const std::string prefix = root.string() + "/";
  for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at)) {
    text.erase(at, prefix.size());
  }
  return text;
}

Api::Api(ServeOptions options) : options_(std::move(options)), dir_(options_.dir) {}

std::function<void()> Api::deadline_check(const char* what) const {
  const auto limit = std::chrono::duration<double>(options_.time_limit_s);
  const auto deadline = std::chrono::steady_clock::now() + limit;
  const double seconds = options_.time_limit_s;
  return [deadline, seconds, what, stopping = options_.stopping] {
    if (stopping && stopping()) throw RequestError(503, "the server is stopping");
    if (std::chrono::steady_clock::now() > deadline) {
      throw RequestError(503, fmt::format("the {} took longer than the server's time limit "
                                          "of {} s (maskc serve --time-limit)",
                                          what, seconds));
    }
  };
}

CompileOptions Api::compile_options(const std::map<std::string, std::string>& defines,
                                    const char* what) const {
  CompileOptions options;
  options.defines = defines;
  options.max_bytes = options_.max_bytes;
  options.check_cancelled = deadline_check(what);
  // The page draws masks of at most max_page_tokens: a larger one is refused from its
  // declarations, before its M is allocated (a 22,000-token mask is 3.9 GB).
  options.check_size = [max_tokens = options_.max_page_tokens](int64_t, int64_t, int64_t n) {
    if (n > max_tokens) {
      throw RequestError(413, fmt::format("{} tokens: the page draws masks of at most {} (maskc "
                                          "show --png draws any size)",
                                          n, max_tokens));
    }
  };
  return options;
}

Reply Api::info() const {
  json examples = json::array();
  if (!options_.examples_dir.empty()) {
    examples = ServedDir(options_.examples_dir).list_files({".mask"});
  }
  std::vector<std::string> task_names = tasks::boolean_task_names();
  for (const auto& name : tasks::arithmetic_task_names()) task_names.push_back(name);
  const json reply = {{"dir", dir_.root().filename().string()},
                      {"specs", dir_.list_files({".mask"})},
                      {"tables", dir_.list_files({".csv"})},
                      {"examples", examples},
                      {"tasks", task_names},
                      {"max_page_tokens", options_.max_page_tokens}};
  return text_reply(json_text(reply), "application/json");
}

Reply Api::file(const Query& query) const {
  const auto at = query.find("path");
  const std::string relative = at == query.end() ? "" : at->second;
  const fs::path path = dir_.file_to_read(relative);
  if (path.extension() != ".mask" && path.extension() != ".csv") {
    throw RequestError(403, "the editor opens .mask specs and .csv truth tables only");
  }
  return text_reply(read_regular_file(path.string(), kMaxSpecBytes, "file"));
}

Reply Api::example(const Query& query) const {
  if (options_.examples_dir.empty()) throw RequestError(404, "this maskc has no shipped specs");
  const auto at = query.find("name");
  const ServedDir examples(options_.examples_dir);
  const fs::path path = examples.file_to_read(at == query.end() ? "" : at->second);
  return text_reply(read_regular_file(path.string(), kMaxSpecBytes, "spec"));
}

Reply Api::compile(const std::string& body) const {
  const json request = parse_body(body);
  const std::string source = source_of(request);
  const std::string file = request.value("file", "untitled.mask");
  const auto start = std::chrono::steady_clock::now();
  const CompiledMask mask = compile_source(source, file, compile_options(defines_of(request)));
  const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
  if (mask.n > options_.max_page_tokens) {
    throw RequestError(413, fmt::format("{} tokens: the page draws masks of at most {} (maskc show "
                                        "--png draws any size)",
                                        mask.n, options_.max_page_tokens));
  }
  const int64_t layer = std::clamp<int64_t>(request.value("layer", int64_t{0}), 0, mask.layers - 1);
  const int64_t head = std::clamp<int64_t>(request.value("head", int64_t{0}), 0, mask.heads - 1);
  json header = mask_header(mask, layer, head);
  header["compile_ms"] = took.count();
  return Reply{200, "application/octet-stream", mask_reply_body(mask, layer, head, header)};
}

Reply Api::validate(const std::string& body) const {
  const json request = parse_body(body);
  const std::string source = source_of(request);
  // One time limit for the whole request: the compile, then the analysis.
  CompileOptions options = compile_options(defines_of(request), "validation");
  options.provenance = false;
  const CompiledMask mask = compile_source(source, request.value("file", "untitled.mask"), options);
  std::optional<std::string> task, table;
  std::vector<std::string> depends;  // declared dependencies, as `maskc validate --depends`
  if (request.contains("task")) task = request.at("task").get<std::string>();
  if (request.contains("truth_table")) {
    table = dir_.file_to_read(request.at("truth_table").get<std::string>()).string();
  }
  if (request.contains("depends")) depends.push_back(request.at("depends").get<std::string>());
  if (int{task.has_value()} + int{table.has_value()} + int{!depends.empty()} != 1) {
    throw RequestError(400,
                       "name one target: a built-in task, a truth table under the folder, or "
                       "declared dependencies (depends, as maskc validate --depends)");
  }
  validate::ValidateOptions validation;
  validation.check_cancelled = options.check_cancelled;
  const validate::Target target = validate::target_of(mask, task, table, depends, validation);
  const validate::ValidationReport report = validate::validate_target(mask, target, validation);
  const json reply = {{"ok", report.ok()},
                      {"text", without_root(validate::format_report(report), dir_.root())}};
  return text_reply(json_text(reply), "application/json");
}

Reply Api::save(const std::string& body) const {
  const json request = parse_body(body);
  const std::string relative = request.at("path").get<std::string>();
  const std::string source = source_of(request);
  const fs::path path = dir_.file_to_write(relative);
  if (path.extension() != ".mask") throw RequestError(403, "the editor saves .mask specs only");
  if (path.filename().string() == runfolder::kSpecFile &&
      fs::exists(path.parent_path() / runfolder::kConfigFile)) {
    throw RequestError(403, fmt::format("{} is the spec a run recorded: save the edited spec under "
                                        "another name",
                                        quote_input(relative)));
  }
  write_file_atomic(path.string(), source);
  return text_reply(json_text({{"saved", dir_.relative(path)}, {"bytes", source.size()}}),
                    "application/json");
}

}  // namespace maskprior::serve
