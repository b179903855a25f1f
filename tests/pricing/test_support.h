// Helpers shared by the pricing tests: fixture paths, fresh database files, an independent view
// of a database's contents (read with the SQLite C API, not through our code), and an
// independent decimal-to-micro-USD conversion for expected values.
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace fleetcast::pricing_test {

inline std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(FLEETCAST_SOURCE_DIR) / "tests" / "pricing" / "data" / name;
}

inline std::filesystem::path shared_data(const std::string& name) {
  return std::filesystem::path(FLEETCAST_SHARED_DATA_DIR) / name;
}

inline std::filesystem::path real_ec2instances_file() {
  return shared_data("prices/ec2instances_gpu_2025-11-30.json");
}

/// A path for a new database under the test output directory, with no file (or WAL) there yet.
inline std::filesystem::path fresh_database(const std::string& name) {
  const std::filesystem::path dir = std::filesystem::path(FLEETCAST_TEST_OUTPUT_DIR) / "pricing";
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / (name + ".db");
  for (const char* suffix : {"", "-wal", "-shm"}) std::filesystem::remove(file.string() + suffix);
  return file;
}

/// "3.06" -> 3060000 by string manipulation (at most six decimals), independent of parse_usd.
inline std::int64_t micro_usd_of(const std::string& decimal) {
  const auto dot = decimal.find('.');
  std::string whole = decimal.substr(0, dot);
  std::string fraction = dot == std::string::npos ? "" : decimal.substr(dot + 1);
  if (fraction.size() > 6) throw std::invalid_argument("more than six decimals: " + decimal);
  fraction.resize(6, '0');
  return std::stoll(whole) * 1'000'000 + std::stoll(fraction);
}

/// Row counts and price sums of every table: equal digests mean the data did not change.
inline std::string database_digest(const std::filesystem::path& file) {
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) != SQLITE_OK) {
    sqlite3_close(db);
    return "cannot open";
  }
  std::string digest;
  const char* queries[] = {
      ("SELECT count(*) || '/' || coalesce(sum(hourly_micro_usd), 0) || '/' || coalesce(sum(upfront_micro_usd), 0) "
       "FROM offers"),
      "SELECT count(*) || '/' || coalesce(sum(price_micro_usd), 0) FROM spot_prices",
      "SELECT count(*) || '/' || coalesce(sum(vcpus), 0) FROM instance_types",
      "SELECT count(*) FROM pools", "SELECT count(*) FROM spot_risks",
      "SELECT count(*) || '/' || coalesce(sum(hourly_micro_usd), 0) FROM savings_plan_rates",
      "SELECT count(*) FROM import_log"};  // last: some tests compare all but the log
  for (const char* query : queries) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, query, -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW) {
      digest += reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
    } else {
      digest += sqlite3_errmsg(db);
    }
    digest += ";";
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return digest;
}

/// Runs SQL on a database file through a separate raw connection.
inline int raw_exec(const std::filesystem::path& file, const std::string& sql) {
  sqlite3* db = nullptr;
  int rc = sqlite3_open(file.c_str(), &db);
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr);
  sqlite3_close(db);
  return rc;
}

}  // namespace fleetcast::pricing_test
