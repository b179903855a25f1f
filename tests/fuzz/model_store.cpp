// The SQLite model store (`forecast_models` table, `fleetcast train --db`): the input is the
// database file's bytes, read for the model named "demand". SQLite checks its own format; the
// harness reaches what fleetcast does with whatever a damaged or foreign file holds (a missing
// table, another column type, a NULL, a text that is not a model).
#include "fleetcast/forecast.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::no_escape([&] {
    const std::filesystem::path file = fuzz::scratch_dir() / "models.db";
    fuzz::write_database_file(file, fuzz::as_text(data, size));
    if (auto model = forecast::load_model_from_database(file, "demand"); !model.ok()) {
      fuzz::explain(model.status().message());
    }
  });
  return 0;
}
