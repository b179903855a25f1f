#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/csv.h"
#include "core/random.h"
#include "core/text.h"
#include "engine/spot_market.h"

using namespace fleetcast;
using engine::SpotMarket;

namespace {

const Instant kStart = *parse_instant("2026-01-05T00:00:00Z");

PoolKey aws_pool() { return PoolKey{"aws", "us-east-1", "us-east-1c", "p3.2xlarge", PurchaseOption::spot}; }

Horizon horizon_of(Seconds duration) { return Horizon{kStart, duration, Seconds{60}}; }

Money usd(double amount) { return Money::from_usd(amount); }

SpotRisk risk_of(InterruptionBucket bucket) {
  SpotRisk risk;
  risk.pool = aws_pool();
  risk.bucket = bucket;
  return risk;
}

SpotMarket advisor_market(const std::optional<SpotRisk>& risk, std::string provider = "aws") {
  PoolKey pool = aws_pool();
  pool.provider = std::move(provider);
  auto market = SpotMarket::with_advisor(pool, horizon_of(30 * kDay), {}, usd(0.9), risk);
  REQUIRE(market.ok());
  return std::move(*market);
}

// Writes `text` to a file in the test output folder and returns its path.
std::filesystem::path write_file(const std::string& name, const std::string& text) {
  std::filesystem::create_directories(FLEETCAST_TEST_OUTPUT_DIR);
  const std::filesystem::path path = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / name;
  std::ofstream(path) << text;
  return path;
}

std::shared_ptr<const engine::AvailabilityTrace> trace_from(const std::string& name, const std::string& text) {
  auto trace = engine::read_availability_trace(write_file(name, text));
  REQUIRE(trace.ok());
  return std::make_shared<const engine::AvailabilityTrace>(std::move(*trace));
}

SpotMarket trace_market(std::shared_ptr<const engine::AvailabilityTrace> trace, Seconds horizon, int scale = 1) {
  auto market = SpotMarket::with_trace(aws_pool(), horizon_of(horizon), {}, usd(0.9), std::move(trace), scale);
  REQUIRE(market.ok());
  return std::move(*market);
}

// Seconds of [0, end) during which `holds(capacity)` is true, walking the capacity changes.
template <typename Predicate>
std::int64_t seconds_where(const SpotMarket& market, Seconds end, Predicate holds) {
  std::int64_t total = 0;
  Seconds from{0};
  std::vector<Seconds> boundaries = market.capacity_changes_within(Seconds{0}, end);
  boundaries.push_back(end);
  for (const Seconds to : boundaries) {
    if (holds(market.capacity_at(from))) total += (to - from).count();
    from = to;
  }
  return total;
}

}  // namespace

TEST_CASE("engine::interruption_hazard_per_hour gives the bucket's monthly probability over 720 h", "[engine]") {
  const std::vector<std::pair<InterruptionBucket, double>> midpoints{
      {InterruptionBucket::under_5_percent, 0.025},       {InterruptionBucket::from_5_to_10_percent, 0.075},
      {InterruptionBucket::from_10_to_15_percent, 0.125}, {InterruptionBucket::from_15_to_20_percent, 0.175},
      {InterruptionBucket::over_20_percent, 0.25}};
  for (const auto& [bucket, p] : midpoints) {
    CAPTURE(interruption_bucket_name(bucket));
    CHECK(engine::monthly_interruption_probability(bucket) == p);
    const double lambda = engine::interruption_hazard_per_hour(bucket);
    CHECK(lambda == Approx(-std::log(1 - p) / 720).epsilon(1e-14));
    CHECK(std::abs((1 - std::exp(-lambda * 720)) - p) < 1e-12);
  }
}

TEST_CASE("engine::interruption_notice is two minutes on AWS and 30 s elsewhere", "[engine]") {
  CHECK(engine::interruption_notice("aws") == Seconds{120});
  CHECK(engine::interruption_notice("gcp") == Seconds{30});
  CHECK(engine::interruption_notice("azure") == Seconds{30});
  CHECK(engine::interruption_notice("oci") == Seconds{30});
  CHECK(advisor_market(std::nullopt, "gcp").notice() == Seconds{30});
}

TEST_CASE("engine::SpotMarket interrupts at the advisor hazard over many instances", "[engine]") {
  // 20,000 instances, each running 720 h: the count interrupted within 720 h is binomial(n, p).
  constexpr int instances = 20000;
  const Seconds month = 720 * kHour;
  for (const auto bucket : {InterruptionBucket::under_5_percent, InterruptionBucket::from_10_to_15_percent,
                            InterruptionBucket::over_20_percent}) {
    CAPTURE(interruption_bucket_name(bucket));
    const SpotMarket market = advisor_market(risk_of(bucket));
    RandomStream interruptions = RandomStream::for_purpose(11, "spot_interruptions");
    int interrupted = 0;
    const Seconds launched_at = 5 * kHour;
    for (int i = 0; i < instances; ++i) {
      const Seconds wait = market.time_to_interruption(launched_at, interruptions);
      REQUIRE(wait >= Seconds{1});
      if (wait <= month) ++interrupted;
    }
    const double p = engine::monthly_interruption_probability(bucket);
    const double expected = instances * p;
    const double standard_error = std::sqrt(instances * p * (1 - p));
    CHECK(std::abs(interrupted - expected) < 5 * standard_error);
  }
}

TEST_CASE("engine::SpotMarket uses the default bucket for a pool without advisor figures and says so", "[engine]") {
  const SpotMarket defaulted = advisor_market(std::nullopt, "azure");
  CHECK_THAT(defaulted.description(), Catch::Contains("10-15%"));
  CHECK_THAT(defaulted.description(), Catch::Contains("default"));
  const SpotMarket published = advisor_market(risk_of(InterruptionBucket::under_5_percent));
  CHECK_THAT(published.description(), Catch::Contains("<5%"));
  CHECK_THAT(published.description(), !Catch::Contains("default"));
  CHECK_FALSE(defaulted.replays_trace());
  CHECK(defaulted.capacity_at(Seconds{0}) == SpotMarket::kUnlimitedCapacity);
  CHECK(defaulted.capacity_changes_within(Seconds{0}, kDay).empty());
}

TEST_CASE("engine::SpotMarket fails advisor launches with the bucket's monthly probability", "[engine]") {
  constexpr int launches = 20000;
  const SpotMarket market = advisor_market(risk_of(InterruptionBucket::over_20_percent));
  RandomStream stream = RandomStream::for_purpose(3, "spot_launches");
  int failed = 0;
  for (int i = 0; i < launches; ++i) {
    if (!market.launch_succeeds(Seconds{i}, 0, stream)) ++failed;
  }
  CHECK(std::abs(failed - launches * 0.25) < 5 * std::sqrt(launches * 0.25 * 0.75));
}

TEST_CASE("engine::SpotMarket prices are a step function of the history", "[engine]") {
  const PoolKey pool = aws_pool();
  const std::vector<SpotPricePoint> history{{pool, kStart - kHour, usd(1.00)},
                                            {pool, kStart + 2 * kHour, usd(1.50)},
                                            {pool, kStart + 5 * kHour, usd(1.50)},
                                            {pool, kStart + 6 * kHour, usd(0.80)}};
  auto market = SpotMarket::with_advisor(pool, horizon_of(kDay), history, usd(9), std::nullopt);
  REQUIRE(market.ok());
  CHECK(market->price_at(Seconds{0}) == usd(1.00));
  CHECK(market->price_at(2 * kHour - Seconds{1}) == usd(1.00));
  CHECK(market->price_at(2 * kHour) == usd(1.50));
  CHECK(market->price_at(5 * kHour + Seconds{30}) == usd(1.50));
  CHECK(market->price_at(6 * kHour) == usd(0.80));
  CHECK(market->price_at(100 * kHour) == usd(0.80));
  using Changes = std::vector<std::pair<Seconds, Money>>;
  CHECK(market->price_changes_within(Seconds{0}, kDay) == Changes{{2 * kHour, usd(1.50)}, {6 * kHour, usd(0.80)}});
  CHECK(market->price_changes_within(2 * kHour, 6 * kHour) == Changes{{2 * kHour, usd(1.50)}});
  CHECK(market->price_changes_within(3 * kHour, 6 * kHour).empty());
}

TEST_CASE("engine::SpotMarket prices before the history and without one", "[engine]") {
  const PoolKey pool = aws_pool();
  auto late = SpotMarket::with_advisor(pool, horizon_of(kDay), {{pool, kStart + kHour, usd(2)}}, usd(9), std::nullopt);
  REQUIRE(late.ok());
  CHECK(late->price_at(Seconds{0}) == usd(2));
  auto constant = SpotMarket::with_advisor(pool, horizon_of(kDay), {}, usd(0.9), std::nullopt);
  REQUIRE(constant.ok());
  CHECK(constant->price_at(Seconds{0}) == usd(0.9));
  CHECK(constant->price_at(kDay) == usd(0.9));
  CHECK(constant->price_changes_within(Seconds{0}, kDay).empty());
}

TEST_CASE("engine::SpotMarket refuses an unordered or negative price history", "[engine]") {
  const PoolKey pool = aws_pool();
  auto unordered = SpotMarket::with_advisor(
      pool, horizon_of(kDay), {{pool, kStart + kHour, usd(2)}, {pool, kStart, usd(1)}}, usd(0), std::nullopt);
  REQUIRE_FALSE(unordered.ok());
  CHECK(unordered.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(unordered.status().message(), Catch::Contains("aws/us-east-1/us-east-1c/p3.2xlarge"));
  auto negative = SpotMarket::with_advisor(pool, horizon_of(kDay), {{pool, kStart, usd(-1)}}, usd(0), std::nullopt);
  REQUIRE_FALSE(negative.ok());
  CHECK(negative.status().code() == StatusCode::invalid_argument);
}

TEST_CASE("engine::SpotMarket replays a one-node availability trace", "[engine]") {
  // Available over [0, 120) and [180, 300); the last tick holds for the 60 s gap before it.
  const auto trace = trace_from("one_node.csv", "t_seconds,available\n0,1\n60,1\n120,0\n180,1\n240,1\n300,0\n");
  CHECK(trace->length == Seconds{360});
  const SpotMarket market = trace_market(trace, Seconds{360});
  RandomStream unused = RandomStream::for_purpose(1, "spot");
  CHECK(market.capacity_at(Seconds{0}) == 1);
  CHECK(market.capacity_at(Seconds{119}) == 1);
  CHECK(market.capacity_at(Seconds{120}) == 0);
  CHECK(market.capacity_at(Seconds{179}) == 0);
  CHECK(market.capacity_at(Seconds{180}) == 1);
  CHECK(market.capacity_at(Seconds{330}) == 0);
  CHECK(market.capacity_changes_within(Seconds{0}, Seconds{360}) ==
        std::vector<Seconds>{Seconds{120}, Seconds{180}, Seconds{300}});
  CHECK(market.capacity_changes_within(Seconds{121}, Seconds{300}) == std::vector<Seconds>{Seconds{180}});
  // An instance is reclaimed at the first tick with no capacity at or after its launch.
  CHECK(market.time_to_interruption(Seconds{0}, unused) == Seconds{120});
  CHECK(market.time_to_interruption(Seconds{60}, unused) == Seconds{60});
  CHECK(market.time_to_interruption(Seconds{200}, unused) == Seconds{100});
  CHECK(market.time_to_interruption(Seconds{150}, unused) == Seconds{0});
  CHECK(market.replays_trace());
  // Launches need capacity beyond what the pool already holds.
  CHECK(market.launch_succeeds(Seconds{0}, 0, unused));
  CHECK_FALSE(market.launch_succeeds(Seconds{0}, 1, unused));
  CHECK_FALSE(market.launch_succeeds(Seconds{150}, 0, unused));
  CHECK_THAT(market.description(), Catch::Contains("one_node.csv"));
}

TEST_CASE("engine::SpotMarket scales a trace's capacity", "[engine]") {
  const auto trace = trace_from("scaled.csv", "t_seconds,available\n0,1\n60,0\n");
  const SpotMarket market = trace_market(trace, Seconds{120}, 4);
  RandomStream unused = RandomStream::for_purpose(1, "spot");
  CHECK(market.capacity_at(Seconds{0}) == 4);
  CHECK(market.launch_succeeds(Seconds{0}, 3, unused));
  CHECK_FALSE(market.launch_succeeds(Seconds{0}, 4, unused));
  CHECK(market.capacity_at(Seconds{60}) == 0);
}

TEST_CASE("engine::SpotMarket replays multi-node and irregular traces", "[engine]") {
  SECTION("a four-node trace: partial drops change capacity, only a drop to zero reclaims everything") {
    const auto trace = trace_from("four_node.csv", "t_seconds,available\n0,4\n300,2\n600,2\n900,0\n1200,3\n");
    const SpotMarket market = trace_market(trace, Seconds{1500});
    RandomStream unused = RandomStream::for_purpose(1, "spot");
    CHECK(market.capacity_at(Seconds{450}) == 2);
    CHECK(market.capacity_changes_within(Seconds{0}, Seconds{1500}) ==
          std::vector<Seconds>{Seconds{300}, Seconds{900}, Seconds{1200}});
    CHECK(market.time_to_interruption(Seconds{100}, unused) == Seconds{800});
    CHECK(market.time_to_interruption(Seconds{1200}, unused) == SpotMarket::kNever);
  }
  SECTION("irregular ticks, shifted to start at zero") {
    const auto trace = trace_from("irregular.csv", "t_seconds,available\n100,1\n110,1\n200,0\n");
    CHECK(trace->tick_seconds == std::vector<std::int64_t>{0, 10, 100});
    CHECK(trace->length == Seconds{190});
  }
}

TEST_CASE("engine::read_availability_trace names the file and line of bad input", "[engine]") {
  const auto check_error = [](const std::string& name, const std::string& text, const std::string& expected) {
    auto trace = engine::read_availability_trace(write_file(name, text));
    REQUIRE_FALSE(trace.ok());
    CHECK(trace.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(trace.status().message(), Catch::Contains(expected));
  };
  check_error("bad_header.csv", "time,available\n0,1\n60,1\n", "bad_header.csv:1");
  check_error("unordered.csv", "t_seconds,available\n0,1\n60,1\n60,0\n", "unordered.csv:4");
  check_error("negative.csv", "t_seconds,available\n0,1\n60,-1\n", "negative.csv:3");
  check_error("fraction.csv", "t_seconds,available\n0,1\n60,0.5\n", "fraction.csv:3");
  check_error("one_row.csv", "t_seconds,available\n0,1\n", "at least two ticks");
  // 10,000 years is 315,360,000,000 s: one second more is refused, whatever the sign, so that
  // neither the shift to the first tick nor the last tick's length overflows.
  check_error("far_future.csv", "t_seconds,available\n-5,1\n315360000001,1\n", "far_future.csv:3");
  check_error("far_past.csv", "t_seconds,available\n-315360000001,1\n0,1\n", "far_past.csv:2");
  check_error("int64_max.csv", "t_seconds,available\n0,1\n9223372036854775806,1\n9223372036854775807,1\n",
              "int64_max.csv:3");
  CHECK(engine::read_availability_trace(
            write_file("widest.csv", "t_seconds,available\n-315360000000,1\n315360000000,2\n"))
            ->length == Seconds{4 * 315'360'000'000});
  auto missing = engine::read_availability_trace(write_file("x", "") / "missing.csv");
  CHECK_FALSE(missing.ok());
}

TEST_CASE("engine::SpotMarket refuses a trace shorter than the horizon", "[engine]") {
  const auto trace = trace_from("short.csv", "t_seconds,available\n0,1\n3600,1\n");  // covers 2 h
  auto market = SpotMarket::with_trace(aws_pool(), horizon_of(3 * kHour), {}, usd(1), trace, 1);
  REQUIRE_FALSE(market.ok());
  CHECK(market.status().code() == StatusCode::failed_precondition);
  CHECK_THAT(market.status().message(), Catch::Contains("short.csv"));
  CHECK_THAT(market.status().message(), Catch::Contains("7200 s"));
  CHECK_THAT(market.status().message(), Catch::Contains("10800 s"));
  CHECK(SpotMarket::with_trace(aws_pool(), horizon_of(2 * kHour), {}, usd(1), trace, 1).ok());
  CHECK_FALSE(SpotMarket::with_trace(aws_pool(), horizon_of(kHour), {}, usd(1), trace, 0).ok());
}

TEST_CASE("engine::SpotMarket replays real SkyPilot traces with the manifest's availability", "[engine]") {
  const std::filesystem::path spot_dir = std::filesystem::path(FLEETCAST_SHARED_DATA_DIR) / "spot";
  REQUIRE(std::filesystem::exists(spot_dir / "spot_traces_manifest.csv"));
  auto manifest = csv::read_file(spot_dir / "spot_traces_manifest.csv");
  REQUIRE(manifest.ok());
  const auto column = [&](std::string_view name) {
    const auto index = manifest->column(name);
    REQUIRE(index.has_value());
    return *index;
  };
  const std::size_t file_column = column("file");
  for (const std::string name : {"availability_1node_aws_2023-02-15_us-east-1c_v100_1.csv",
                                 "availability_16node_aws_2023-08-27_us-east-2b_v100_1.csv"}) {
    CAPTURE(name);
    const std::vector<std::string>* row = nullptr;
    for (const auto& candidate : manifest->rows) {
      if (candidate[file_column] == "skypilot_spot_traces/" + name) row = &candidate;
    }
    REQUIRE(row != nullptr);
    const auto number = [&](std::string_view field) { return *text::parse_double((*row)[column(field)]); };
    const std::filesystem::path file = spot_dir / "skypilot_spot_traces" / name;
    REQUIRE(std::filesystem::exists(file));
    auto trace = engine::read_availability_trace(file);
    REQUIRE(trace.ok());
    CHECK(static_cast<double>(trace->tick_seconds.size()) == number("n_points"));
    CHECK(static_cast<double>(trace->length.count()) == number("n_points") * number("gap_seconds"));
    const Seconds length = trace->length;
    const SpotMarket market =
        trace_market(std::make_shared<const engine::AvailabilityTrace>(std::move(*trace)), length);
    const auto target = static_cast<int>(number("target_nodes"));
    const double any = static_cast<double>(seconds_where(market, length, [](int c) { return c > 0; }));
    const double full = static_cast<double>(seconds_where(market, length, [&](int c) { return c >= target; }));
    // The manifest gives shares to four decimals.
    CHECK(std::abs(any / static_cast<double>(length.count()) - number("frac_any_available")) <= 0.00005 + 1e-9);
    CHECK(std::abs(full / static_cast<double>(length.count()) - number("frac_full_target_available")) <=
          0.00005 + 1e-9);
  }
}
