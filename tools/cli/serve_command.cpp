// `fleetcast serve`: the library as an HTTP JSON service (tools/serve/): POST /v1/plan,
// /v1/simulate, /v1/backtest, /v1/export, GET /v1/offers, /healthz. Runs until SIGTERM or SIGINT,
// then stops accepting, lets the requests in flight finish (at most --grace seconds, then cancels
// their work) and exits 0.
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <memory>
#include <thread>

#include "tools/cli/commands.h"
#include "tools/serve/http_service.h"

namespace fleetcast::cli {

namespace {

// SIGTERM and SIGINT, blocked in every thread (the service's threads inherit the mask of the
// thread that starts them) and taken by one thread that waits for them.
sigset_t shutdown_signals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  return signals;
}

int run_serve(const serve::ServeOptions& options) {
  const sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);  // a client that hung up is an error on its socket, not the end of the server
  auto service = serve::HttpService::create(options, std::cerr);
  if (!service.ok()) {
    std::cerr << "fleetcast serve: " << service.status().message() << '\n';
    return exit_code_for(service.status());
  }
  std::thread signal_waiter([&signals, &service] {
    int signal = 0;
    sigwait(&signals, &signal);
    (*service)->stop();
  });
  const Status served = (*service)->serve();
  pthread_kill(signal_waiter.native_handle(), SIGTERM);  // ends the waiter when serve() ended alone
  signal_waiter.join();
  if (!served.ok()) {
    std::cerr << "fleetcast serve: " << served.message() << '\n';
    return kExitFailure;
  }
  return kExitOk;
}

}  // namespace

void add_serve_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<serve::ServeOptions>();
  auto* command = app.add_subcommand("serve", "Serve plans, simulations, backtests, exports and prices over HTTP (JSON)");
  command->add_option("--host", options->host, "Address to bind")->capture_default_str();
  command->add_option("--port", options->port, "Port to bind (0: a free one; the first log line names it)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  command->add_option("--data-dir", options->data_dir,
                      "Folder the files named by scenarios in request bodies are resolved in and confined to "
                      "(default: none; such scenarios are refused)");
  command->add_option("--prices", options->prices, "Price database (SQLite) of GET /v1/offers (default: the built-in catalog)");
  command->add_option("--threads", options->threads, "Workers that plan and simulate (0: one per core)")
      ->check(CLI::Range(0, 1024))
      ->capture_default_str();
  command->add_option("--queue", options->queue, "Requests that may wait for a worker; past them 503 with Retry-After")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  command->add_option("--connections", options->connections, "Connection threads (reading and writing requests)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  command->add_option("--max-body", options->max_body_bytes, "Largest request body in bytes; past it 413")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 32))
      ->capture_default_str();
  command->add_option("--time-limit", options->time_limit_seconds,
                      "Seconds a request may take, waiting included; past them its work is cancelled and it gets 504")
      ->check(CLI::Range(0.001, 86400.0))
      ->capture_default_str();
  command->add_option("--read-timeout", options->read_timeout_seconds,
                      "Seconds a client may stay silent while sending its request; past them it is disconnected")
      ->check(CLI::Range(1, 3600))
      ->capture_default_str();
  command->add_option("--grace", options->grace_seconds,
                      "Seconds in-flight requests may take to finish after SIGTERM; then their work is cancelled")
      ->check(CLI::Range(0.0, 3600.0))
      ->capture_default_str();
  command->footer(
      "Logs one JSON line per request on stderr; the first line names the address it listens on.\n"
      "Exit status: 0 stopped by SIGTERM or SIGINT, 1 it could not listen, 2 an invalid option.");
  command->callback([options, &exit_code] { exit_code = run_serve(*options); });
}

}  // namespace fleetcast::cli
