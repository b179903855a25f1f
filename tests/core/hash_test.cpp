#include <catch2/catch.hpp>

#include "core/hash.h"
#include "core/statistics.h"

using namespace fleetcast;

TEST_CASE("core::Fnv1a64 matches the published FNV-1a 64 test vectors", "[core]") {
  // From the FNV reference test suite (Noll, "FNV hash" test vectors).
  CHECK(Fnv1a64().value() == 0xcbf29ce484222325ULL);
  CHECK(Fnv1a64().add("a").value() == 0xaf63dc4c8601ec8cULL);
  CHECK(Fnv1a64().add("foobar").value() == 0x85944171f73967e8ULL);
  CHECK(Fnv1a64().add("foo").add("bar").value() == Fnv1a64().add("foobar").value());
}

TEST_CASE("core::Fnv1a64 mixes a word as its bytes, least significant first", "[core]") {
  const std::string bytes{'\x01', '\x02', '\x03', '\x04', '\x05', '\x06', '\x07', '\x08'};
  CHECK(Fnv1a64().add_word(0x0807060504030201ULL).value() == Fnv1a64().add(bytes).value());
}

TEST_CASE("core::fnv1a64_label writes 16 lower-case hex digits", "[core]") {
  CHECK(hash_hex(0xaf63dc4c8601ec8cULL) == "af63dc4c8601ec8c");
  CHECK(fnv1a64_label(0x1ULL) == "fnv1a64:0000000000000001");
}

TEST_CASE("core::statistics interpolates quantiles between closest ranks", "[core]") {
  const std::vector<double> sorted{10, 20, 30, 40, 50};
  CHECK(statistics::interpolated_quantile(sorted, 0.0) == 10);
  CHECK(statistics::interpolated_quantile(sorted, 1.0) == 50);
  CHECK(statistics::interpolated_quantile(sorted, 0.5) == 30);
  // rank 0.95 * 4 = 3.8: 40 + 0.8 * 10.
  CHECK(statistics::interpolated_quantile(sorted, 0.95) == Approx(48.0));
  CHECK(statistics::interpolated_quantile({}, 0.5) == 0);
  CHECK(statistics::mean(sorted) == 30);
  CHECK(statistics::mean({}) == 0);
}
