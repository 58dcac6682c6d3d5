#include "serve/server.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <httplib.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <ostream>
#include <semaphore>
#include <set>
#include <thread>

#include "core/error.h"
#include "core/regular_file.h"
#include "io/json_file.h"
#include "serve/page.h"

namespace maskprior::serve {

namespace {

using Clock = std::chrono::steady_clock;

/// A body of 16 MiB of spec text may grow on its way into a JSON string (escapes).
constexpr size_t kMaxBodyBytes = size_t{2} * kMaxSpecBytes;
/// The most one request's reads take from a connection, however its body is framed (chunked
/// bodies carry no Content-Length for httplib's payload cap to check): room for a body over
/// kMaxBodyBytes to be read and dropped, so that its client still reads the 413.
constexpr size_t kMaxRequestBytes = size_t{2} * kMaxBodyBytes;
/// Compiles, validations and learned masks at once: each may hold up to --max-bytes.
constexpr std::ptrdiff_t kHeavyRequests = 2;
/// How long a whole request may take to arrive, headers and body together: a client that sends
/// a header line every few seconds (slowloris) is cut off here, whatever each recv waits.
constexpr auto kRequestDeadline = std::chrono::seconds(10);
/// How long a whole reply may take to leave (a client that reads it slowly).
constexpr auto kReplyDeadline = std::chrono::seconds(60);
/// How long a kept-alive connection may wait idle for its next request, and how many it sends.
constexpr auto kKeepAlive = std::chrono::seconds(5);
constexpr size_t kKeepAliveRequests = 100;
/// Connections served at once; one more is answered 503 and closed. The pool has threads for
/// these and for the refusals, so a refused client never waits behind the served ones.
constexpr int kMaxConnections = 64;
constexpr size_t kWorkerThreads = kMaxConnections + 16;
/// How often a waiting connection looks whether the server is stopping.
constexpr auto kPollStep = std::chrono::milliseconds(100);

/// Waits until `sock` is ready for `events` (POLLIN, POLLOUT), in steps of kPollStep: false at
/// `deadline`, on an error, or (`stop_waits`) once `stopping` is set.
bool wait_for(int sock, short events, Clock::time_point deadline, const std::atomic<bool>& stopping,
              bool stop_waits) {
  while (!(stop_waits && stopping)) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) return false;
    pollfd fd{sock, events, 0};
    const int ready = ::poll(&fd, 1, static_cast<int>(std::min(left, kPollStep).count()));
    if (ready > 0) return (fd.revents & (events | POLLHUP | POLLERR)) != 0;
    if (ready < 0 && errno != EINTR) return false;
  }
  return false;
}

/// One request on a connection, read and answered within deadlines for the whole of it (httplib's
/// own stream times out each recv only), at most kMaxRequestBytes read, and its reads ended as
/// soon as the server stops.
class DeadlineStream final : public httplib::Stream {
 public:
  DeadlineStream(int sock, const std::atomic<bool>& stopping)
      : sock_(sock), stopping_(stopping), read_deadline_(Clock::now() + kRequestDeadline) {}

  bool is_readable() const override {
    return wait_for(sock_, POLLIN, read_deadline_, stopping_, /*stop_waits=*/true);
  }
  bool is_writable() const override {
    return wait_for(sock_, POLLOUT, write_deadline(), stopping_, /*stop_waits=*/false);
  }

  ssize_t read(char* ptr, size_t size) override {
    if (buffered_at_ == buffered_) {
      if (read_bytes_ >= kMaxRequestBytes || !is_readable()) {
        cut_off_ = true;
        return -1;
      }
      const ssize_t got = ::recv(sock_, buffer_.data(),
                                 std::min(buffer_.size(), kMaxRequestBytes - read_bytes_), 0);
      if (got <= 0) return got;
      read_bytes_ += static_cast<size_t>(got);
      buffered_ = static_cast<size_t>(got);
      buffered_at_ = 0;
    }
    const size_t taken = std::min(size, buffered_ - buffered_at_);
    std::memcpy(ptr, buffer_.data() + buffered_at_, taken);
    buffered_at_ += taken;
    return static_cast<ssize_t>(taken);
  }

  ssize_t write(const char* ptr, size_t size) override {
    if (!is_writable()) return -1;
    const ssize_t sent = ::send(sock_, ptr, size, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return 0;
    return sent;
  }

  void get_remote_ip_and_port(std::string& ip, int& port) const override {
    address_of(&getpeername, ip, port);
  }
  void get_local_ip_and_port(std::string& ip, int& port) const override {
    address_of(&getsockname, ip, port);
  }
  socket_t socket() const override { return sock_; }

  /// Whether a read was refused (the deadline, the byte cap, the server stopping): the connection
  /// is then closed, not kept for another request.
  bool cut_off() const { return cut_off_; }

 private:
  Clock::time_point write_deadline() const {
    if (!write_started_) write_started_ = Clock::now();
    return *write_started_ + kReplyDeadline;
  }

  void address_of(int (*name_of)(int, sockaddr*, socklen_t*), std::string& ip, int& port) const {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    std::array<char, INET6_ADDRSTRLEN> text{};
    ip.clear();
    port = 0;
    if (name_of(sock_, reinterpret_cast<sockaddr*>(&address), &length) != 0) return;
    if (address.ss_family == AF_INET) {
      const auto& v4 = reinterpret_cast<const sockaddr_in&>(address);
      inet_ntop(AF_INET, &v4.sin_addr, text.data(), text.size());
      port = ntohs(v4.sin_port);
    } else if (address.ss_family == AF_INET6) {
      const auto& v6 = reinterpret_cast<const sockaddr_in6&>(address);
      inet_ntop(AF_INET6, &v6.sin6_addr, text.data(), text.size());
      port = ntohs(v6.sin6_port);
    }
    ip = text.data();
  }

  int sock_;
  const std::atomic<bool>& stopping_;
  Clock::time_point read_deadline_;
  mutable std::optional<Clock::time_point> write_started_;
  std::array<char, 4096> buffer_{};
  size_t buffered_ = 0;
  size_t buffered_at_ = 0;
  size_t read_bytes_ = 0;
  bool cut_off_ = false;
};

/// httplib's server with each connection served through DeadlineStream, at most kMaxConnections
/// at once, and its kept-alive connections closed once the server stops.
class BoundedServer final : public httplib::Server {
 public:
  /// `listening` is called once the workers are started, just before connections are accepted:
  /// announcing the URL earlier would let clients overflow httplib's listen backlog of 5.
  BoundedServer(const std::atomic<bool>& stopping, std::function<void()> listening)
      : stopping_(stopping) {
    new_task_queue = [listening = std::move(listening)] {
      auto* pool = new httplib::ThreadPool(kWorkerThreads);
      listening();
      return pool;
    };
  }

 private:
  bool process_and_close_socket(socket_t sock) override {
    bool ok = false;
    if (++connections_ > kMaxConnections) {
      refuse(sock);
    } else {
      for (size_t left = kKeepAliveRequests;
           left > 0 && !stopping_ && svr_sock_ != INVALID_SOCKET &&
           wait_for(sock, POLLIN, Clock::now() + kKeepAlive, stopping_, /*stop_waits=*/true);
           --left) {
        DeadlineStream stream(sock, stopping_);
        bool closed = false;
        ok = process_request(stream, /*close_connection=*/left == 1, closed, nullptr);
        if (!ok || closed || stream.cut_off()) break;
      }
    }
    --connections_;
    ::shutdown(sock, SHUT_RDWR);
    ::close(sock);
    return ok;
  }

  /// A 503 for a connection over the cap; what the client sent is drained (briefly) so that the
  /// close does not reset the connection before the client reads the reply.
  static void refuse(int sock) {
    static const std::string reply = [] {
      const std::string body = nlohmann::json{
          {"error", fmt::format("the server has {} connections "
                                "open: try again",
                                kMaxConnections)},
          {"busy", true}}.dump();
      return fmt::format(
          "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\n"
          "Content-Length: {}\r\nConnection: close\r\n\r\n{}",
          body.size(), body);
    }();
    const std::atomic<bool> never{false};
    if (!wait_for(sock, POLLOUT, Clock::now() + std::chrono::seconds(1), never, false)) return;
    ::send(sock, reply.data(), reply.size(), MSG_NOSIGNAL);
    ::shutdown(sock, SHUT_WR);
    std::array<char, 4096> drain{};
    const auto until = Clock::now() + std::chrono::seconds(1);
    for (size_t total = 0;
         total < (size_t{1} << 20) && wait_for(sock, POLLIN, until, never, false);) {
      const ssize_t got = ::recv(sock, drain.data(), drain.size(), 0);
      if (got <= 0) break;
      total += static_cast<size_t>(got);
    }
  }

  const std::atomic<bool>& stopping_;
  std::atomic<int> connections_{0};
};

void send_error(httplib::Response& res, int status, const std::string& message,
                nlohmann::json extra = nlohmann::json::object()) {
  extra["error"] = message;
  res.status = status;
  res.set_content(json_text(extra), "application/json");
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
    send_error(res, e.status(), without_root(e.what(), dir.root()),
               // A 503 for want of a compile slot: the page tries again (app.js).
               std::string_view(e.what()).find("busy") != std::string_view::npos
                   ? nlohmann::json{{"busy", true}}
                   : nlohmann::json::object());
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

std::string lower_case(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

/// Whether `name` is an IP address (`127.0.0.1`, `[::1]`): no DNS name, so no name to rebind.
bool is_ip_literal(const std::string& name) {
  std::array<unsigned char, sizeof(in6_addr)> address{};
  if (name.size() > 2 && name.front() == '[' && name.back() == ']') {
    return inet_pton(AF_INET6, name.substr(1, name.size() - 2).c_str(), address.data()) == 1;
  }
  return inet_pton(AF_INET, name.c_str(), address.data()) == 1;
}

/// The names a Host header may give besides IP literals: localhost, this machine's name, a
/// --host that is a name, and every --allow-host; lower case, without a trailing dot.
std::set<std::string> allowed_host_names(const ServerOptions& options) {
  std::set<std::string> names{"localhost"};
  std::array<char, 256> hostname{};
  if (gethostname(hostname.data(), hostname.size() - 1) == 0 && hostname[0] != '\0') {
    names.insert(lower_case(hostname.data()));
  }
  names.insert(lower_case(options.host));
  for (const std::string& name : options.allow_hosts) names.insert(lower_case(name));
  return names;
}

/// Whether a Host header names this server: `NAME:PORT` (or NAME alone on port 80) with NAME an
/// IP literal or an allowed name. Any other name may be one that a foreign site made resolve to
/// this machine (DNS rebinding), whatever address the server listens on.
bool host_allowed(const std::string& host, const std::set<std::string>& names, int port) {
  std::string name = host;
  const size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(']', colon) == std::string::npos) {
    if (host.substr(colon + 1) != std::to_string(port)) return false;
    name = host.substr(0, colon);
  } else if (port != 80) {
    return false;
  }
  name = lower_case(name);
  if (!name.empty() && name.back() == '.') name.pop_back();
  return is_ip_literal(name) || names.contains(name);
}

/// Requests another site's page could make are refused: a Host that is not this server's (DNS
/// rebinding: another name that resolves to this machine), an API request that a browser marks as
/// made by another site (Sec-Fetch-Site; an <img> tag's GET included), and a POST that is not
/// JSON (a form, or a "simple" cross-origin request, which needs no consent from the server).
bool refuse_foreign(const httplib::Request& req, httplib::Response& res,
                    const std::set<std::string>& names, int port) {
  if (!host_allowed(req.get_header_value("Host"), names, port)) {
    send_error(res, 403,
               "this server answers requests to its own address only (Host header; maskc serve "
               "--allow-host NAME adds a name)");
    return true;
  }
  const std::string site = req.get_header_value("Sec-Fetch-Site");
  if (req.path.rfind("/api/", 0) == 0 && !site.empty() && site != "same-origin" && site != "none") {
    send_error(res, 403,
               fmt::format("this server answers its own page only (Sec-Fetch-Site: {})",
                           escape_control_chars(site, true)));
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

/// The body of a POST, read as it arrives: RequestError 413 past kMaxBodyBytes, however it is
/// framed (httplib checks a Content-Length against its cap, but counts no chunked body).
std::string read_body(const httplib::Request& req, const httplib::ContentReader& reader) {
  const std::string declared = req.get_header_value("Content-Length");
  bool too_large =
      !declared.empty() && std::strtoull(declared.c_str(), nullptr, 10) > kMaxBodyBytes;
  std::string body;
  const bool complete = reader([&](const char* data, size_t size) {
    if (size > kMaxBodyBytes - body.size()) {
      too_large = true;
      return false;
    }
    body.append(data, size);
    return true;
  });
  if (too_large) {
    throw RequestError(
        413, fmt::format("the request body is over {}: refused", byte_size_text(kMaxBodyBytes)));
  }
  if (!complete) throw RequestError(400, "the request body ended before it was complete");
  return body;
}

void add_api_routes(httplib::Server& server, const Api& api, std::counting_semaphore<>& heavy) {
  const ServedDir& dir = api.dir();
  auto get = [&](const char* path, auto answer) {
    server.Get(path, [&dir, answer](const httplib::Request& req, httplib::Response& res) {
      respond(res, dir, [&] { return answer(query_of(req)); });
    });
  };
  // A request that finds both slots taken is answered at once, not parked on a worker thread.
  auto limited = [&heavy](auto work) {
    if (!heavy.try_acquire()) {
      throw RequestError(503, "the server is busy with other compiles: try again");
    }
    struct Release {
      std::counting_semaphore<>& slots;
      ~Release() { slots.release(); }
    } release{heavy};
    return work();
  };
  auto post = [&](const char* path, auto answer) {
    server.Post(path, [&dir, answer, limited](const httplib::Request& req, httplib::Response& res,
                                              const httplib::ContentReader& reader) {
      respond(res, dir, [&] {
        const std::string body = read_body(req, reader);
        return limited([&] { return answer(body); });
      });
      if (res.status == 413) res.set_header("Connection", "close");
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

  std::atomic<bool> stopping{false};
  ServeOptions serve = options.serve;
  serve.stopping = [&stopping] { return stopping.load(); };
  const Api api(serve);
  std::counting_semaphore<> heavy(kHeavyRequests);
  int port = 0;
  BoundedServer server(stopping, [&] {
    const std::string shown_host =
        options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
    out << fmt::format("maskc serve: {} at http://{}:{}/ (Ctrl-C stops)", api.dir().root().string(),
                       shown_host, port)
        << std::endl;
  });
  server.set_payload_max_length(kMaxBodyBytes);
  // SO_REUSEADDR only: httplib's default also sets SO_REUSEPORT, with which a second maskc serve
  // on a port in use would share it instead of saying so.
  server.set_socket_options([](socket_t sock) {
    const int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  port = bind(server, options);
  const std::set<std::string> host_names = allowed_host_names(options);
  server.set_pre_routing_handler([&host_names, port](const httplib::Request& req,
                                                     httplib::Response& res) {
    return refuse_foreign(req, res, host_names, port) ? httplib::Server::HandlerResponse::Handled
                                                      : httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_default_headers({{"Content-Security-Policy",
                               "default-src 'self'; img-src 'self' data: blob:; "
                               "style-src 'self' 'unsafe-inline'"},
                              {"X-Content-Type-Options", "nosniff"},
                              {"Cache-Control", "no-store"}});
  add_page_routes(server);
  add_api_routes(server, api, heavy);

  std::atomic<bool> listening_ended{false};
  std::thread stopper([&] {
    // Waits in steps, so that it also ends when listening ends without a signal.
    const timespec step{0, 200'000'000};
    while (!listening_ended && sigtimedwait(&stop_signals, nullptr, &step) < 0) {
    }
    // Connections waiting for a request, requests still arriving and compiles in progress all
    // look at `stopping` within kPollStep (a compile through check_cancelled).
    stopping = true;
    // A signal before the listening loop starts: stop() would find nothing to stop yet.
    while (!listening_ended) {
      server.stop();
      const int again = sigtimedwait(&stop_signals, nullptr, &step);
      if (again > 0) {  // a second Ctrl-C: no more waiting for the requests in flight
        const char message[] = "maskc serve: stopped at once (a second signal)\n";
        [[maybe_unused]] const ssize_t written =
            ::write(STDERR_FILENO, message, sizeof message - 1);
        std::_Exit(128 + again);
      }
    }
  });
  server.listen_after_bind();
  listening_ended = true;
  stopper.join();
  out << "maskc serve: stopped" << std::endl;
}

}  // namespace maskprior::serve
