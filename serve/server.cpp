#include "serve/server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <ostream>
#include <semaphore>
#include <thread>

#include "core/error.h"
#include "serve/page.h"

namespace maskprior::serve {

namespace {

/// A body of 16 MiB of spec text may grow on its way into a JSON string (escapes).
constexpr size_t kMaxBodyBytes = size_t{2} * kMaxSpecBytes;
/// Compiles, validations and learned masks at once: each may hold up to --max-bytes.
constexpr std::ptrdiff_t kHeavyRequests = 2;

void send_error(httplib::Response& res, int status, const std::string& message,
                nlohmann::json extra = nlohmann::json::object()) {
  extra["error"] = message;
  res.status = status;
  res.set_content(extra.dump(), "application/json");
}

void send_spec_error(httplib::Response& res, const SpecError& e, const ServedDir& dir) {
  const Diagnostic& d = e.diagnostic();
  send_error(res, 422, without_root(format_diagnostic(d), dir.root()),
             {{"file", without_root(d.where.file, dir.root())},
              {"line", d.where.line},
              {"column", d.where.column},
              {"message", d.message}});
}

/// Answers with what `answer` returns, or the HTTP error its exception stands for: the server
/// never ends on a request.
template <class F>
void respond(httplib::Response& res, const ServedDir& dir, F&& answer) {
  try {
    const Reply reply = answer();
    res.status = reply.status;
    res.set_content(reply.body, reply.content_type.c_str());
  } catch (const RequestError& e) {
    send_error(res, e.status(), without_root(e.what(), dir.root()));
  } catch (const SpecError& e) {
    send_spec_error(res, e, dir);
  } catch (const InputError& e) {
    send_error(res, 400, without_root(escape_control_chars(e.what(), true), dir.root()));
  } catch (const nlohmann::json::exception& e) {
    send_error(res, 400, fmt::format("malformed request: {}", e.what()));
  } catch (const std::bad_alloc&) {
    send_error(res, 507, "out of memory: this request needs more memory than is available");
  } catch (const std::exception& e) {
    send_error(res, 500, without_root(escape_control_chars(e.what(), true), dir.root()));
  }
}

Query query_of(const httplib::Request& req) {
  Query query;
  for (const auto& [key, value] : req.params) query.emplace(key, value);
  return query;
}

/// Requests another site's page could make are refused: a Host that is not this server's (DNS
/// rebinding: another name that resolves to 127.0.0.1), and a POST that is not JSON (a form, or a
/// "simple" cross-origin request, which needs no consent from the server).
bool refuse_foreign(const httplib::Request& req, httplib::Response& res,
                    const ServerOptions& options, int port) {
  const std::string host = req.get_header_value("Host");
  const std::string port_text = fmt::format(":{}", port);
  bool ours = host.size() > port_text.size() &&
              host.compare(host.size() - port_text.size(), port_text.size(), port_text) == 0;
  if (ours && is_loopback(options.host)) {
    const std::string name = host.substr(0, host.size() - port_text.size());
    ours = name == "127.0.0.1" || name == "localhost" || name == "[::1]";
  }
  if (!ours) {
    send_error(res, 403, "this server answers requests to its own address only (Host header)");
    return true;
  }
  if (req.method == "POST" &&
      req.get_header_value("Content-Type").rfind("application/json", 0) != 0) {
    send_error(res, 415, "POST requests send JSON (Content-Type: application/json)");
    return true;
  }
  return false;
}

void add_page_routes(httplib::Server& server) {
  server.Get(R"(/|/([a-z]+\.[a-z]+))", [](const httplib::Request& req, httplib::Response& res) {
    const std::string name = req.matches.size() > 1 && req.matches[1].length() > 0
                                 ? req.matches[1].str()
                                 : std::string("index.html");
    const auto asset = page_asset(name);
    if (!asset) return send_error(res, 404, "no such page");
    res.set_content(std::string(asset->bytes), std::string(asset->content_type).c_str());
  });
}

void add_api_routes(httplib::Server& server, const Api& api, std::counting_semaphore<>& heavy,
                    double time_limit_s) {
  const ServedDir& dir = api.dir();
  auto get = [&](const char* path, auto answer) {
    server.Get(path, [&dir, answer](const httplib::Request& req, httplib::Response& res) {
      respond(res, dir, [&] { return answer(query_of(req)); });
    });
  };
  auto limited = [&heavy, time_limit_s](auto work) {
    const auto wait = std::chrono::duration<double>(time_limit_s);
    if (!heavy.try_acquire_for(wait)) throw RequestError(503, "the server is busy: try again");
    struct Release {
      std::counting_semaphore<>& slots;
      ~Release() { slots.release(); }
    } release{heavy};
    return work();
  };
  auto post = [&](const char* path, auto answer) {
    server.Post(path, [&dir, answer, limited](const httplib::Request& req, httplib::Response& res) {
      respond(res, dir, [&] { return limited([&] { return answer(req.body); }); });
    });
  };
  get("/api/info", [&api](const Query&) { return api.info(); });
  get("/api/file", [&api](const Query& q) { return api.file(q); });
  get("/api/example", [&api](const Query& q) { return api.example(q); });
  get("/api/runs", [&api](const Query&) { return api.runs(); });
  get("/api/run", [&api](const Query& q) { return api.run(q); });
  get("/api/run_mask",
      [&api, limited](const Query& q) { return limited([&] { return api.run_mask(q); }); });
  get("/api/reports", [&api](const Query&) { return api.reports(); });
  get("/api/raw", [&api](const Query& q) { return api.raw(q); });
  post("/api/compile", [&api](const std::string& body) { return api.compile(body); });
  post("/api/validate", [&api](const std::string& body) { return api.validate(body); });
  post("/api/save", [&api](const std::string& body) { return api.save(body); });
}

/// Binds host:port (any free port for 0) and returns the port; InputError when it cannot.
int bind(httplib::Server& server, const ServerOptions& options) {
  const int port = options.port == 0 ? server.bind_to_any_port(options.host)
                   : server.bind_to_port(options.host, options.port) ? options.port
                                                                     : -1;
  if (port <= 0) {
    throw InputError(
        fmt::format("cannot listen on {}:{} (is the port in use, or the host no "
                    "address of this machine?)",
                    options.host, options.port));
  }
  return port;
}

}  // namespace

bool is_loopback(const std::string& host) {
  return host == "127.0.0.1" || host == "::1" || host == "localhost";
}

void run_server(const ServerOptions& options, std::ostream& out) {
  // The signals that stop the server are taken by one thread (sigwait), which stops the server;
  // every other thread, the server's workers included, inherits them blocked.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stop_signals, signal);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-reply is a failed write, not the end of maskc

  const Api api(options.serve);
  std::counting_semaphore<> heavy(kHeavyRequests);
  httplib::Server server;
  server.set_payload_max_length(kMaxBodyBytes);
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, with which a second maskc serve
  // on a port in use would share it instead of saying so.
  server.set_socket_options([](socket_t sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  server.set_read_timeout(10);
  server.set_write_timeout(30);
  const int port = bind(server, options);
  server.set_pre_routing_handler([&options, port](const httplib::Request& req,
                                                  httplib::Response& res) {
    return refuse_foreign(req, res, options, port) ? httplib::Server::HandlerResponse::Handled
                                                   : httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_default_headers({{"Content-Security-Policy",
                               "default-src 'self'; img-src 'self' data: blob:; "
                               "style-src 'self' 'unsafe-inline'"},
                              {"X-Content-Type-Options", "nosniff"},
                              {"Cache-Control", "no-store"}});
  add_page_routes(server);
  add_api_routes(server, api, heavy, options.serve.time_limit_s);

  std::atomic<bool> listening_ended{false};
  std::thread stopper([&] {
    // Waits in steps, so that it also ends when listening ends without a signal.
    const timespec step{0, 200'000'000};
    while (!listening_ended && sigtimedwait(&stop_signals, nullptr, &step) < 0) {
    }
    // A signal before the listening loop starts: stop() would find nothing to stop yet.
    while (!listening_ended) {
      server.stop();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  const std::string shown_host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  out << fmt::format("maskc serve: {} at http://{}:{}/ (Ctrl-C stops)", api.dir().root().string(),
                     shown_host, port)
      << std::endl;
  server.listen_after_bind();
  listening_ended = true;
  stopper.join();
  out << "maskc serve: stopped" << std::endl;
}

}  // namespace maskprior::serve
