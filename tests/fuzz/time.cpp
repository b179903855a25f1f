// Duration, instant and cron strings (scenario horizons, commitments, origins, scheduled actions,
// CSV timestamps): every input is given to all three parsers. What they accept must come back
// unchanged through the formatters, as include/fleetcast/time.h promises, and a parsed cron
// schedule's next occurrence must be a minute it matches.
#include "core/cron.h"
#include "fleetcast/time.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::no_escape([&] {
    if (auto duration = parse_duration(text); duration.ok()) {
      fuzz::expect(duration->count() >= 0 && *duration <= kMaxDuration, "parse_duration returned a value out of range");
      auto again = parse_duration(format_duration(*duration));
      fuzz::expect(again.ok() && *again == *duration, "format_duration does not read back: " + format_duration(*duration));
    }
    if (auto instant = parse_instant(text); instant.ok()) {
      fuzz::expect(*instant >= kEarliestInstant && *instant <= kLatestInstant, "parse_instant returned an instant out of range");
      auto again = parse_instant(format_instant(*instant));
      fuzz::expect(again.ok() && *again == *instant, "format_instant does not read back: " + format_instant(*instant));
    }
    if (auto cron = parse_cron(text); cron.ok()) {
      // Five years from a fixed instant: a few thousand day steps at most.
      const Instant from{Seconds{1'767'225'600}};  // 2026-01-01T00:00:00Z
      if (auto next = next_cron_occurrence(*cron, from, kYear * 5)) {
        fuzz::expect(*next > from && cron_matches(*cron, *next), "next_cron_occurrence returned a minute the schedule does not match");
      }
    }
    (void)is_time_zone_name(text);
  });
  return 0;
}
