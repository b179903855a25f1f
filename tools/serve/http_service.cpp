#include "tools/serve/http_service.h"

#include <httplib.h>

#include <algorithm>
#include <thread>

#include <sys/socket.h>

#include "core/json_text.h"
#include "fleetcast/executor.h"
#include "fleetcast/time.h"

namespace fleetcast::serve {

namespace {

using Clock = std::chrono::steady_clock;

// The routes, and the one method each answers; any other method on them gets 405.
constexpr std::pair<std::string_view, std::string_view> kRoutes[] = {
    {"/v1/plan", "POST"},   {"/v1/simulate", "POST"}, {"/v1/backtest", "POST"},
    {"/v1/export", "POST"}, {"/v1/offers", "GET"},    {"/healthz", "GET"},
};

void send(httplib::Response& response, const Reply& reply) {
  response.status = reply.status;
  response.set_content(reply.body, reply.content_type.c_str());
}

// The parameters of the query string only: httplib also puts the fields of a form-encoded body in
// Request::params (curl --data sends its body as one), and no body here is a form.
QueryParameters query_parameters(const httplib::Request& request) {
  QueryParameters parameters;
  const std::size_t mark = request.target.find('?');
  if (mark != std::string::npos) httplib::detail::parse_query_text(request.target.substr(mark + 1), parameters);
  return parameters;
}

// UTC wall-clock time with milliseconds, RFC 3339 ("2026-11-24T23:20:24.123Z"): the log's "time".
std::string now_text() {
  const auto now = std::chrono::floor<std::chrono::milliseconds>(std::chrono::system_clock::now());
  const Instant second = std::chrono::floor<Seconds>(now);
  const auto millis = static_cast<int>((now - second).count());
  std::string text = format_instant(second);
  text.insert(text.size() - 1, {'.', static_cast<char>('0' + millis / 100), static_cast<char>('0' + millis / 10 % 10),
                                static_cast<char>('0' + millis % 10)});
  return text;
}

Result<std::unique_ptr<PriceSource>> open_offers_catalog(const ServeOptions& options) {
  if (!options.prices) return make_builtin_price_source();
  PriceDatabase::Options database_options;
  database_options.mode = PriceDatabase::Mode::read_only;
  auto database = PriceDatabase::open(*options.prices, database_options);
  if (!database.ok()) return database.status().with_context("--prices");
  return std::unique_ptr<PriceSource>(std::move(*database));
}

}  // namespace

Result<std::unique_ptr<HttpService>> HttpService::create(const ServeOptions& options, std::ostream& log) {
  if (options.data_dir) {
    std::error_code error;
    if (!std::filesystem::is_directory(*options.data_dir, error)) {
      return invalid_argument_error("--data-dir: '" + options.data_dir->string() + "' is not a directory");
    }
  }
  auto catalog = open_offers_catalog(options);
  if (!catalog.ok()) return catalog.status();
  std::unique_ptr<HttpService> service(new HttpService(options, log));
  service->offers_catalog_ = std::move(*catalog);
  service->context_.offers_catalog = service->offers_catalog_.get();
  return service;
}

HttpService::HttpService(const ServeOptions& options, std::ostream& log)
    : options_(options),
      log_(log),
      registry_(std::make_unique<forecast::BackendRegistry>()),
      server_(std::make_unique<httplib::Server>()) {
  const int workers = options_.threads > 0 ? options_.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  executor_ = make_thread_pool(workers);
  work_ = std::make_unique<WorkQueue>(*executor_, workers, options_.queue);
  context_.data_root = FileRoot{options_.data_dir, "--data-dir"};
  context_.registry = registry_.get();
  context_.executor = executor_.get();
  context_.workers = workers;
  server_->new_task_queue = [connections = options_.connections] { return new httplib::ThreadPool(connections); };
  server_->set_payload_max_length(options_.max_body_bytes);
  server_->set_read_timeout(options_.read_timeout_seconds, 0);
  server_->set_write_timeout(options_.read_timeout_seconds, 0);
  // An idle keep-alive connection holds a connection thread, and delays shutdown, this long.
  server_->set_keep_alive_timeout(std::min(options_.read_timeout_seconds, 5));
  server_->set_keep_alive_max_count(1000);
  // A reply goes out in two writes (headers, then body): with Nagle's algorithm the body waits for
  // the client's delayed ACK of the headers, about 40 ms on Linux, longer than a plan takes.
  server_->set_tcp_nodelay(true);
  // httplib's default options add SO_REUSEPORT, with which a second server binds the same port and
  // the kernel splits the connections between the two: SO_REUSEADDR alone (a restart may bind
  // while the old connections sit in TIME_WAIT), so that a port in use is an error.
  server_->set_socket_options([this](socket_t socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listening_socket_ = socket;  // the last one offered is the one bound (httplib closes the others)
  });
  add_routes();
}

HttpService::~HttpService() = default;

void HttpService::add_routes() {
  using Endpoint = Reply (*)(const EndpointContext&, const EndpointRequest&);
  const std::pair<const char*, Endpoint> work_routes[] = {
      {"/v1/plan", plan_endpoint}, {"/v1/simulate", simulate_endpoint},
      {"/v1/backtest", backtest_endpoint}, {"/v1/export", export_endpoint}};
  // The body is read through a content reader: httplib's own reading refuses a form-encoded body
  // (curl --data-binary's default type) over 8 KiB with 413, whatever --max-body says. The reader
  // is held to --max-body by httplib (set_payload_max_length) as the body would have been.
  for (const auto& [path, endpoint] : work_routes) {
    server_->Post(path, [this, endpoint = endpoint](const httplib::Request& request, httplib::Response& response,
                                                    const httplib::ContentReader& read) {
      if (request.is_multipart_form_data()) {
        send(response, error_reply(415, "unsupported_media_type",
                                   "a multipart form upload: send the JSON document itself as the body "
                                   "(curl --data-binary @FILE), not as a form field"));
        return;
      }
      // httplib holds a Content-Length to --max-body, not a chunked body: this holds both.
      std::string body;
      bool too_large = false;
      if (!read([&](const char* data, std::size_t length) {
            too_large = body.size() + length > options_.max_body_bytes;
            if (!too_large) body.append(data, length);
            return !too_large;
          })) {
        if (too_large) {
          response.status = 413;  // on_error says why
          response.set_header("Connection", "close");  // the rest of the body is never read
        }
        return;  // else httplib answers: the body was cut short
      }
      work_route(request, body, response, endpoint);
    });
  }
  server_->Get("/v1/offers", [this](const httplib::Request& request, httplib::Response& response) {
    send(response, offers_endpoint(context_, query_parameters(request)));
  });
  server_->Get("/healthz", [this](const httplib::Request& request, httplib::Response& response) {
    if (const QueryParameters query = query_parameters(request); !query.empty()) {
      send(response, status_reply(invalid_argument_error("unknown query parameter '" + query.begin()->first +
                                                         "'; expected none")));
      return;
    }
    const nlohmann::ordered_json document{{"status", "ok"}, {"admitted", work_->admitted()},
                                          {"workers", context_.workers}, {"queue", options_.queue}};
    send(response, Reply{200, "application/json", json_text::dump(document, 2) + "\n"});
  });
  server_->set_pre_routing_handler([this](const httplib::Request& request, httplib::Response& response) {
    on_start(request, response);
    return refused_before_body(request, response) ? httplib::Server::HandlerResponse::Handled
                                                  : httplib::Server::HandlerResponse::Unhandled;
  });
  server_->set_error_handler(httplib::Server::HandlerWithResponse(
      [this](const httplib::Request& request, httplib::Response& response) {
        if (!response.body.empty()) return httplib::Server::HandlerResponse::Unhandled;  // an endpoint's own error
        on_error(request, response);
        return httplib::Server::HandlerResponse::Handled;
      }));
  server_->set_exception_handler([](const httplib::Request&, httplib::Response& response, std::exception_ptr) {
    send(response, error_reply(500, "internal", "the request failed unexpectedly (out of memory?)"));
  });
  server_->set_logger([this](const httplib::Request& request, const httplib::Response& response) {
    on_logged(request, response);
  });
}

void HttpService::work_route(const httplib::Request& request, std::string_view body, httplib::Response& response,
                             Reply (*endpoint)(const EndpointContext&, const EndpointRequest&)) {
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(options_.time_limit_seconds));
  const bool html = request.get_header_value("Accept").find("text/html") != std::string::npos;
  const QueryParameters query = query_parameters(request);
  Reply reply;
  const WorkQueue::Outcome outcome = work_->run(
      [&](const CancellationToken& token) {
        const double seconds_left = std::chrono::duration<double>(deadline - Clock::now()).count();
        reply = endpoint(context_, EndpointRequest{body, query, html, &token, seconds_left});
      },
      deadline);
  switch (outcome) {
    case WorkQueue::Outcome::done: break;
    case WorkQueue::Outcome::rejected:
      reply = error_reply(503, "queue_full", "every worker is busy and " + std::to_string(options_.queue) +
                                                 " requests are waiting (--queue); retry later");
      response.set_header("Retry-After", "1");
      break;
    case WorkQueue::Outcome::timed_out:
      reply = error_reply(504, "deadline_exceeded", "the request ran past its time limit of " +
                                                        json_text::dump(nlohmann::json(options_.time_limit_seconds)) +
                                                        " s (--time-limit) and its work was cancelled");
      break;
    case WorkQueue::Outcome::cancelled:
      reply = error_reply(503, "shutting_down", "the server is shutting down and cancelled the request's work");
      break;
    case WorkQueue::Outcome::failed:
      reply = error_reply(500, "internal", "the request's work failed unexpectedly (out of memory?)");
      break;
  }
  send(response, reply);
}

void HttpService::on_error(const httplib::Request& request, httplib::Response& response) {
  Reply reply = error_reply(response.status, "http_" + std::to_string(response.status), "the request failed");
  if (response.status == 404) {
    const auto* route = std::find_if(std::begin(kRoutes), std::end(kRoutes), [&](const auto& r) { return r.first == request.path; });
    if (route != std::end(kRoutes)) {
      reply = error_reply(405, "method_not_allowed", request.method + " is not allowed on " + request.path + "; use " +
                                                         std::string(route->second));
      response.set_header("Allow", std::string(route->second));
    } else {
      reply = error_reply(404, "not_found", "no route " + request.path + "; the routes are POST /v1/plan, /v1/simulate, "
                                            "/v1/backtest, /v1/export and GET /v1/offers, /healthz");
    }
  } else if (response.status == 413) {
    reply = error_reply(413, "payload_too_large", "the body is larger than the limit of " +
                                                      std::to_string(options_.max_body_bytes) + " bytes (--max-body)");
  } else if (response.status == 400) {
    reply = error_reply(400, "bad_request", "malformed HTTP request");
  }
  send(response, reply);
}

bool HttpService::refused_before_body(const httplib::Request& request, httplib::Response& response) {
  // httplib reads a body for these methods whatever the route; a request without a length would
  // hold the connection until the read timed out.
  if (request.method != "POST" && request.method != "PUT" && request.method != "PATCH" && request.method != "DELETE") {
    return false;
  }
  const auto route = std::find_if(std::begin(kRoutes), std::end(kRoutes),
                                  [&](const auto& r) { return r.first == request.path && r.second == request.method; });
  const std::string length = request.get_header_value("Content-Length");
  const bool chunked = request.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  if (route == std::end(kRoutes)) {
    response.status = 404;  // on_error answers 405 where the path has another method
    on_error(request, response);
  } else if (!request.has_header("Content-Length") && !chunked) {
    send(response, error_reply(411, "length_required", request.method + " " + request.path +
                                                           " without Content-Length or chunked Transfer-Encoding: send the "
                                                           "document with its length (curl --data-binary @FILE)"));
  } else if (request.has_header("Content-Length") &&
             (length.empty() || length.size() > 19 ||
              !std::all_of(length.begin(), length.end(), [](char c) { return c >= '0' && c <= '9'; }))) {
    send(response, error_reply(400, "bad_request", "Content-Length '" + length + "' is not a whole number of bytes"));
  } else if (request.has_header("Content-Length") && std::stoull(length) > options_.max_body_bytes) {
    response.status = 413;  // on_error says why
    on_error(request, response);
  } else {
    return false;
  }
  response.set_header("Connection", "close");  // the body, if any, is never read
  return true;
}

void HttpService::on_start(const httplib::Request& request, httplib::Response& response) {
  std::uint64_t id = 0;
  {
    std::lock_guard lock(state_mutex_);
    id = next_request_id_++;
    started_[&request] = Started{id, Clock::now()};
  }
  response.set_header("X-Request-Id", std::to_string(id));
}

void HttpService::on_logged(const httplib::Request& request, const httplib::Response& response) {
  std::optional<Started> started;
  {
    std::lock_guard lock(state_mutex_);
    if (auto found = started_.find(&request); found != started_.end()) {
      started = found->second;
      started_.erase(found);
    }
  }
  nlohmann::ordered_json line{{"time", now_text()},
                              {"request_id", started ? nlohmann::ordered_json(started->id) : nlohmann::ordered_json()},
                              {"method", request.method},
                              {"path", request.path},
                              {"status", response.status},
                              {"duration_ms", started ? std::chrono::duration<double, std::milli>(Clock::now() - started->at).count() : 0.0},
                              {"bytes", response.body.size()}};
  log_line(json_text::dump(line));
}

void HttpService::log_line(const std::string& line) {
  std::lock_guard lock(log_mutex_);
  log_ << line << std::endl;
}

Status HttpService::serve() {
  int port = options_.port;
  if (port == 0) {
    port = server_->bind_to_any_port(options_.host);
  } else if (!server_->bind_to_port(options_.host, port)) {
    port = -1;
  }
  // Debian's libcpp-httplib listens with a backlog of 5 (CPPHTTPLIB_LISTEN_BACKLOG, compiled
  // into it): while the accept loop lags, the kernel holds back a burst's connections beyond that
  // until their handshakes are retried. listen() again sets the kernel's limit.
  if (port >= 0 && ::listen(listening_socket_, SOMAXCONN) != 0) port = -1;
  if (port < 0) {
    mark_finished();
    return unavailable_error("cannot listen on " + options_.host + ":" + std::to_string(options_.port));
  }
  log_line(json_text::dump(nlohmann::ordered_json{{"time", now_text()},
                                                   {"event", "listening"},
                                                   {"address", options_.host + ":" + std::to_string(port)},
                                                   {"port", port},
                                                   {"workers", context_.workers},
                                                   {"queue", options_.queue}}));
  server_->listen_after_bind();
  mark_finished();
  log_line(json_text::dump(nlohmann::ordered_json{{"time", now_text()}, {"event", "stopped"}}));
  return {};
}

void HttpService::mark_finished() {
  {
    std::lock_guard lock(state_mutex_);
    finished_ = true;
  }
  finished_changed_.notify_all();
}

void HttpService::stop() {
  const auto cancel_at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                            std::chrono::duration<double>(options_.grace_seconds));
  std::unique_lock lock(state_mutex_);
  while (!finished_) {
    // Again and again: a stop() that comes before listen_after_bind() started is not seen by it.
    lock.unlock();
    server_->stop();
    lock.lock();
    if (Clock::now() >= cancel_at) {
      work_->cancel_all();
      return;
    }
    finished_changed_.wait_for(lock, std::chrono::milliseconds(50), [&] { return finished_; });
  }
}

}  // namespace fleetcast::serve
