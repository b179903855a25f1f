// The HTTP front of `fleetcast serve` (cpp-httplib): routes, limits, error bodies, the request log
// and shutdown. The work of a request is an endpoint (endpoints.h) run through the WorkQueue.
//
// Every reply is JSON (or the HTML report for Accept: text/html); every error body is
// {"error": {"code", "message"}}. One JSON line per request goes to the log (stderr): time,
// request_id, method, path, status, duration_ms, bytes; the first line says where it listens.
//
// Thread-safety: stop() may be called from any thread (a signal handler thread) while serve() runs.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <ostream>
#include <string>

#include "fleetcast/status.h"
#include "tools/serve/endpoints.h"
#include "tools/serve/work_queue.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace fleetcast::serve {

struct ServeOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                        // 0: a free port, logged on the first line
  std::optional<std::filesystem::path> data_dir;
  std::optional<std::filesystem::path> prices;  // the catalog of GET /v1/offers; default built-in
  int threads = 0;                        // planning workers; 0: one per hardware thread
  int queue = 16;                         // admitted requests waiting for a worker
  int connections = 32;                   // connection threads (reading, writing, waiting)
  std::size_t max_body_bytes = 8u << 20;  // 413 above it
  double time_limit_seconds = 60;         // per request, queueing included; 504 past it
  int read_timeout_seconds = 5;           // a client silent this long is disconnected
  double grace_seconds = 10;              // after SIGTERM, before in-flight work is cancelled
};

class HttpService {
 public:
  /// Opens the offers catalog and starts the workers; `log` receives one JSON line per request.
  static Result<std::unique_ptr<HttpService>> create(const ServeOptions& options, std::ostream& log);
  ~HttpService();
  HttpService(const HttpService&) = delete;
  HttpService& operator=(const HttpService&) = delete;

  /// Binds, logs the address, and serves until stop(); returns once every request in flight has
  /// been answered. unavailable when the address cannot be bound.
  Status serve();
  /// Stops accepting connections and waits up to the grace period for the requests in flight,
  /// then cancels their work (they answer 503) and returns. Idempotent.
  void stop();

 private:
  HttpService(const ServeOptions& options, std::ostream& log);
  void add_routes();
  void work_route(const httplib::Request& request, std::string_view body, httplib::Response& response,
                  Reply (*endpoint)(const EndpointContext&, const EndpointRequest&));
  void on_error(const httplib::Request& request, httplib::Response& response);
  void on_start(const httplib::Request& request, httplib::Response& response);
  /// Answers, before httplib reads a body, a request whose body it would wait for or skip in vain:
  /// one to a route that takes none (405 or 404), or with no length (411), a malformed length
  /// (400) or one over --max-body (413). false when the request goes on to its route.
  bool refused_before_body(const httplib::Request& request, httplib::Response& response);
  void on_logged(const httplib::Request& request, const httplib::Response& response);
  void log_line(const std::string& line);
  void mark_finished();

  struct Started {
    std::uint64_t id;
    std::chrono::steady_clock::time_point at;
  };

  ServeOptions options_;
  std::ostream& log_;
  std::mutex log_mutex_;
  std::unique_ptr<PriceSource> offers_catalog_;
  std::unique_ptr<forecast::BackendRegistry> registry_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<WorkQueue> work_;
  EndpointContext context_;
  std::unique_ptr<httplib::Server> server_;
  int listening_socket_ = -1;  // the socket server_ binds, as its socket options saw it

  std::mutex state_mutex_;
  std::condition_variable finished_changed_;
  bool finished_ = false;
  std::uint64_t next_request_id_ = 1;
  std::map<const httplib::Request*, Started> started_;  // by the request object, for the log
};

}  // namespace fleetcast::serve
