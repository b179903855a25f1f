// Plan documents (`fleetcast plan` writes them; export, simulate and backtest read them back).
// A plan the reader accepts must survive its own writer: plan_to_json, read again, is the same plan.
#include "fleetcast/plan.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::no_escape([&] {
    auto plan = plan_from_json(text, "plan.json");
    if (!plan.ok()) return fuzz::explain(plan.status().message());
    const std::string written = plan_to_json(*plan);
    auto again = plan_from_json(written, "plan.json (written back)");
    fuzz::expect(again.ok(), "a plan read from a file is refused once written back: " +
                                 (again.ok() ? std::string() : again.status().message()));
    fuzz::expect(plan_to_json(*again) == written, "a plan written back reads as a different plan");
  });
  return 0;
}
