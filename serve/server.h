// `maskc serve`'s HTTP server: the page (serve/page.h) and the answers of serve/api.h, on one
// host and port, until SIGINT, SIGTERM or SIGHUP.
#pragma once

#include <iosfwd>
#include <string>

#include "serve/api.h"

namespace maskprior::serve {

struct ServerOptions {
  ServeOptions serve;
  std::string host = "127.0.0.1";
  int port = 8765;  // 0: any free port (the URL printed says which)
};

/// Whether `host` is this machine only (127.0.0.1, ::1, localhost): anything else exposes DIR.
bool is_loopback(const std::string& host);

/// Serves until a signal asks it to stop, then returns once the requests in flight are answered.
/// Prints the URL to `out` when it listens. InputError when it cannot listen on host:port.
void run_server(const ServerOptions& options, std::ostream& out);

}  // namespace maskprior::serve
