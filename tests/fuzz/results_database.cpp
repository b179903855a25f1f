// The batch results database (`fleetcast batch --out`, then `batch export` and `report`): the input
// is the database file's bytes. Read-only, the harness does what export and report do (every run
// with its time series, the CSV and JSON exports, the summary); read-write, what a resumed batch
// does (the hashes already recorded, then one more run committed). SQLite checks its own format;
// the harness reaches what fleetcast does with whatever a damaged or foreign file holds (a missing
// table, a NULL figure, a parameter that is not JSON, a newer schema_version).
#include <algorithm>

#include "fleetcast/batch.h"
#include "tests/fuzz/fuzz_support.h"

using namespace fleetcast;

namespace {

// The export and the report of a batch, as `batch export` and `report RESULTS.db` make them.
void read_as_export_and_report(const std::filesystem::path& file) {
  auto database = batch::ResultsDatabase::open(file, batch::ResultsDatabase::Mode::read_only);
  if (!database.ok()) return fuzz::explain(database.status().message());
  auto records = (*database)->runs(true);
  if (!records.ok()) return fuzz::explain(records.status().message());
  (void)batch::runs_csv(*records);
  (void)batch::runs_json(*records);
  (void)batch::summarise_records(*records);
}

// A resumed batch: what is recorded, then one more run, which must read back as it was written.
void resume_and_record(const std::filesystem::path& file) {
  auto database = batch::ResultsDatabase::open(file, batch::ResultsDatabase::Mode::read_write);
  if (!database.ok()) return fuzz::explain(database.status().message());
  auto hashes = (*database)->run_hashes();
  if (!hashes.ok()) return fuzz::explain(hashes.status().message());
  batch::RunRecord record;
  record.run_hash = "00000000f022f022";
  record.scenario = "fuzz";
  record.source = "fuzz.json";
  record.parameters = {{"risk", "0.9"}};
  record.seed = 7;
  record.outcome.cost.total = Money::from_micro_usd(1'234'567);
  record.outcome.served_fraction = 0.995;
  if (hashes->contains(record.run_hash)) return;  // the input holds this run already: insert ignores it
  if (Status status = (*database)->insert({&record, 1}); !status.ok()) return fuzz::explain(status.message());
  auto records = (*database)->runs(false);
  if (!records.ok()) return fuzz::explain(records.status().message());
  const auto stored = std::find_if(records->begin(), records->end(),
                                   [&](const batch::RunRecord& row) { return row.run_hash == record.run_hash; });
  fuzz::expect(stored != records->end() && *stored == record, "a committed run does not read back as written");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::no_escape([&] {
    const std::filesystem::path file = fuzz::scratch_dir() / "results.db";
    fuzz::write_database_file(file, fuzz::as_text(data, size));
    read_as_export_and_report(file);
    resume_and_record(file);
  });
  return 0;
}
