#include <catch2/catch.hpp>

#include <csignal>
#include <cstdlib>
#include <string>

#include <sys/wait.h>
#include <unistd.h>

#include "fleetcast/status.h"

using namespace fleetcast;

TEST_CASE("core::Status is ok by default and names its code otherwise", "[core]") {
  CHECK(Status{}.ok());
  CHECK(Status{}.to_string() == "ok");
  const Status error = not_found_error("prices.db: no such file");
  CHECK_FALSE(error.ok());
  CHECK(error.code() == StatusCode::not_found);
  CHECK(error.to_string() == "not_found: prices.db: no such file");
  CHECK(error.with_context("opening catalog").message() == "opening catalog: prices.db: no such file");
  CHECK(Status{}.with_context("ignored").ok());
}

TEST_CASE("core::Result holds a value or the error that explains its absence", "[core]") {
  Result<int> good = 42;
  REQUIRE(good.ok());
  CHECK(*good == 42);
  CHECK(good.status().ok());
  Result<int> bad = invalid_argument_error("negative price");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == StatusCode::invalid_argument);
  CHECK(bad.status().message() == "negative price");
  Result<std::string> moved = std::string("x");
  std::string taken = std::move(moved).value();
  CHECK(taken == "x");
}

TEST_CASE("core::Result built from an OK Status holds an internal error, in every build type", "[core]") {
  const Result<int> result = Status{};
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::internal);
  CHECK(result.status().message().find("built from an OK Status") != std::string::npos);
}

TEST_CASE("core::Result::value() of an error aborts with the Status on stderr, never throws", "[core]") {
  int pipe_ends[2];
  REQUIRE(::pipe(pipe_ends) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the contract violation, in a child process
    ::dup2(pipe_ends[1], STDERR_FILENO);
    const Result<int> result = not_found_error("no such pool");
    const int value = result.value();
    std::_Exit(value == 0 ? 3 : 4);  // not reached
  }
  ::close(pipe_ends[1]);
  std::string written;
  char buffer[256];
  for (ssize_t n; (n = ::read(pipe_ends[0], buffer, sizeof buffer)) > 0;) written.append(buffer, static_cast<std::size_t>(n));
  ::close(pipe_ends[0]);
  int wait_status = 0;
  REQUIRE(::waitpid(child, &wait_status, 0) == child);
  CHECK(WIFSIGNALED(wait_status));
  CHECK(WTERMSIG(wait_status) == SIGABRT);
  CHECK(written.find("not_found: no such pool") != std::string::npos);
}
