// The price importers, one fuzzer per format: FLEETCAST_FUZZ_FORMAT (set by CMake) names the
// ImportFormat. The text goes to the parser the importer uses after reading and hashing the file,
// with a fixed valid-from date (the default would read the clock). A parsed catalog's numbers must
// hold what the README's input limits promise.
#include <cmath>

#include "pricing/importers.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::no_escape([&] {
    ImportOptions options;
    options.provider = "aws";
    options.valid_from = Instant{Seconds{1'764'460'800}};  // 2025-11-30T00:00:00Z
    auto catalog = pricing::parse_price_text(ImportFormat::FLEETCAST_FUZZ_FORMAT, text, "prices", options);
    if (!catalog.ok()) return fuzz::explain(catalog.status().message());
    for (const InstanceType& type : catalog->instance_types) {
      fuzz::expect(type.vcpus >= 0 && type.vcpus <= 100'000 && type.gpu_count >= 0 && type.gpu_count <= 100'000,
                   "an instance type outside the documented vCPU/GPU limits: " + type.name);
      fuzz::expect(std::isfinite(type.memory_gib) && std::isfinite(type.gpu_memory_gib),
                   "an instance type with a non-finite memory size: " + type.name);
    }
  });
  return 0;
}
