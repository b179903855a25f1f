#include "pricing/schema.h"

#include <array>
#include <string>

#include "core/sqlite.h"

namespace fleetcast::pricing::schema {
namespace {

// Money columns hold integer micro-USD; instants integer seconds since the Unix epoch (UTC).
// A regional pool has zone ''. Terms columns are '' for on-demand offers.
constexpr std::array<const char*, 3> kMigrations{
    // 1: providers, regions, zones, instance types, pools, offers, spot price history, import log.
    R"sql(
CREATE TABLE providers (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE);
CREATE TABLE regions (
  id INTEGER PRIMARY KEY,
  provider_id INTEGER NOT NULL REFERENCES providers(id),
  name TEXT NOT NULL,
  UNIQUE (provider_id, name));
CREATE TABLE zones (
  id INTEGER PRIMARY KEY,
  region_id INTEGER NOT NULL REFERENCES regions(id),
  name TEXT NOT NULL,
  UNIQUE (region_id, name));
CREATE TABLE instance_types (
  id INTEGER PRIMARY KEY,
  provider_id INTEGER NOT NULL REFERENCES providers(id),
  name TEXT NOT NULL,
  vcpus INTEGER NOT NULL CHECK (vcpus >= 0),
  memory_gib REAL NOT NULL CHECK (memory_gib >= 0),
  gpu_model TEXT NOT NULL,
  gpu_count INTEGER NOT NULL CHECK (gpu_count >= 0),
  gpu_memory_gib REAL NOT NULL CHECK (gpu_memory_gib >= 0),
  gpu_fraction REAL NOT NULL DEFAULT 0 CHECK (gpu_fraction >= 0 AND gpu_fraction < 1),
  UNIQUE (provider_id, name));
CREATE TABLE pools (
  id INTEGER PRIMARY KEY,
  instance_type_id INTEGER NOT NULL REFERENCES instance_types(id),
  region_id INTEGER NOT NULL REFERENCES regions(id),
  zone TEXT NOT NULL DEFAULT '',
  purchase_option TEXT NOT NULL CHECK (purchase_option IN ('on_demand', 'reserved', 'spot')),
  UNIQUE (instance_type_id, region_id, zone, purchase_option));
CREATE TABLE offers (
  pool_id INTEGER NOT NULL REFERENCES pools(id),
  term TEXT NOT NULL DEFAULT '' CHECK (term IN ('', '1y', '3y')),
  reservation_class TEXT NOT NULL DEFAULT '' CHECK (reservation_class IN ('', 'standard', 'convertible')),
  payment TEXT NOT NULL DEFAULT '' CHECK (payment IN ('', 'no_upfront', 'partial_upfront', 'all_upfront')),
  valid_from INTEGER NOT NULL,
  hourly_micro_usd INTEGER NOT NULL CHECK (hourly_micro_usd >= 0),
  upfront_micro_usd INTEGER NOT NULL DEFAULT 0 CHECK (upfront_micro_usd >= 0),
  hourly_is_effective INTEGER NOT NULL DEFAULT 0 CHECK (hourly_is_effective IN (0, 1)),
  PRIMARY KEY (pool_id, term, reservation_class, payment, valid_from)) WITHOUT ROWID;
CREATE TABLE spot_prices (
  pool_id INTEGER NOT NULL REFERENCES pools(id),
  at INTEGER NOT NULL,
  price_micro_usd INTEGER NOT NULL CHECK (price_micro_usd >= 0),
  PRIMARY KEY (pool_id, at)) WITHOUT ROWID;
CREATE TABLE import_log (
  id INTEGER PRIMARY KEY,
  format TEXT NOT NULL,
  source TEXT NOT NULL,
  file_hash TEXT NOT NULL,
  imported_at INTEGER NOT NULL,
  row_count INTEGER NOT NULL);
CREATE INDEX import_log_by_hash ON import_log (format, file_hash);
)sql",
    // 2: the spot interruption bucket and savings per pool, and each provider's billing rule.
    R"sql(
CREATE TABLE spot_risks (
  pool_id INTEGER NOT NULL REFERENCES pools(id),
  valid_from INTEGER NOT NULL,
  bucket TEXT NOT NULL CHECK (bucket IN ('<5%', '5-10%', '10-15%', '15-20%', '>20%')),
  savings_percent INTEGER CHECK (savings_percent BETWEEN 0 AND 100),
  PRIMARY KEY (pool_id, valid_from)) WITHOUT ROWID;
ALTER TABLE providers ADD COLUMN billing_granularity_s INTEGER;
ALTER TABLE providers ADD COLUMN billing_minimum_s INTEGER;
)sql",
    // 3: Savings Plan rates. Not per pool (a rate is not a pool's price): the instance type is
    // kept by name, so a rate for a type no import described adds no placeholder instance type.
    R"sql(
CREATE TABLE savings_plan_rates (
  provider_id INTEGER NOT NULL REFERENCES providers(id),
  plan_type TEXT NOT NULL CHECK (plan_type IN ('compute', 'ec2_instance')),
  term TEXT NOT NULL CHECK (term IN ('1y', '3y')),
  payment TEXT NOT NULL CHECK (payment IN ('no_upfront', 'partial_upfront', 'all_upfront')),
  region_id INTEGER NOT NULL REFERENCES regions(id),
  instance_type TEXT NOT NULL,
  valid_from INTEGER NOT NULL,
  hourly_micro_usd INTEGER NOT NULL CHECK (hourly_micro_usd >= 0),
  PRIMARY KEY (provider_id, plan_type, term, payment, region_id, instance_type, valid_from)) WITHOUT ROWID;
)sql",
};

}  // namespace

int latest_version() noexcept { return static_cast<int>(kMigrations.size()); }

Result<int> read_version(sqlite3* db, const std::filesystem::path& file) {
  Result<sqlite::Statement> statement = sqlite::prepare(db, file, "PRAGMA user_version");
  if (!statement.ok()) return statement.status();
  Result<bool> row = statement->step("reading the schema version");
  if (!row.ok()) return row.status();
  return static_cast<int>(statement->int64(0));
}

Status newer_version_error(const std::filesystem::path& file, int version) {
  return failed_precondition_error(file.string() + ": the pricing database has schema version " +
                                   std::to_string(version) + ", newer than this fleetcast understands (" +
                                   std::to_string(latest_version()) +
                                   "); use a newer fleetcast or another database file");
}

Status migrate(sqlite3* db, const std::filesystem::path& file, int target) {
  Result<int> version = read_version(db, file);
  if (!version.ok()) return version.status();
  if (*version > target) return newer_version_error(file, *version);
  for (int next = *version + 1; next <= target; ++next) {
    const std::string what = "upgrading the schema to version " + std::to_string(next);
    if (Status status = sqlite::exec(db, file, kMigrations[static_cast<std::size_t>(next - 1)], what); !status.ok()) {
      return status;
    }
    const std::string set_version = "PRAGMA user_version = " + std::to_string(next);
    if (Status status = sqlite::exec(db, file, set_version.c_str(), what); !status.ok()) return status;
  }
  return {};
}

}  // namespace fleetcast::pricing::schema
