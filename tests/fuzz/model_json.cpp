// LSTM model files (JSON, `fleetcast train --out`). A model the reader accepts must survive its
// own writer: model_to_json, read again, gives the same text.
#include "fleetcast/forecast.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::as_text(data, size);
  fuzz::no_escape([&] {
    auto model = forecast::model_from_json(text, "model.json");
    if (!model.ok()) return fuzz::explain(model.status().message());
    const std::string written = forecast::model_to_json(*model);
    auto again = forecast::model_from_json(written, "model.json (written back)");
    fuzz::expect(again.ok(), "a model read from a file is refused once written back: " +
                                 (again.ok() ? std::string() : again.status().message()));
    fuzz::expect(forecast::model_to_json(*again) == written, "a model written back reads as a different model");
  });
  return 0;
}
