// `maskc serve`'s HTTP server: the page (serve/page.h) and the answers of serve/api.h, on one
// host and port, until SIGINT, SIGTERM or SIGHUP.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "serve/api.h"

namespace maskprior::serve {

struct ServerOptions {
  ServeOptions serve;
  std::string host = "127.0.0.1";
  int port = 8765;  // 0: any free port (the URL printed says which)
  /// Names a request's Host header may give besides IP literals, localhost and this machine's
  /// name (--allow-host): the server refuses every other name, whatever address it listens on.
  std::vector<std::string> allow_hosts;
};

/// Whether `host` is this machine only (127.0.0.1, ::1, localhost): anything else exposes DIR.
bool is_loopback(const std::string& host);

/// Serves until a signal asks it to stop, then returns once the requests in flight are answered
/// (compiles in progress end with a 503); a second signal ends the process at once (128 + it).
/// Prints the URL to `out` when it listens. InputError when it cannot listen on host:port.
void run_server(const ServerOptions& options, std::ostream& out);

}  // namespace maskprior::serve
