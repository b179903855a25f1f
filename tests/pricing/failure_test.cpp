// Bad input and hostile conditions: each gives a clear error and leaves the database as it was.
#include <catch2/catch.hpp>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <fstream>
#include <thread>

#include <sqlite3.h>

#include "fleetcast/file_system.h"
#include "fleetcast/pricing.h"
#include "pricing/schema.h"
#include "tests/pricing/test_support.h"

using namespace fleetcast;
using namespace fleetcast::pricing_test;

namespace {

std::unique_ptr<PriceDatabase> open_or_fail(const std::filesystem::path& file, PriceDatabase::Options options = {}) {
  auto db = PriceDatabase::open(file, options);
  INFO(db.status().to_string());
  REQUIRE(db.ok());
  return std::move(db).value();
}

/// Makes a database at schema `version` without PriceDatabase, then runs `sql` on it.
void make_database_at_version(const std::filesystem::path& file, int version, const char* sql) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &raw) == SQLITE_OK);
  REQUIRE(pricing::schema::migrate(raw, file, version).ok());
  REQUIRE(sqlite3_exec(raw, sql, nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(raw);
}

/// The schema version of a database file, read through a connection of its own.
int schema_version_of(const std::filesystem::path& file) {
  sqlite3* raw = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &raw) == SQLITE_OK);
  const Result<int> version = pricing::schema::read_version(raw, file);
  sqlite3_close(raw);
  REQUIRE(version.ok());
  return *version;
}

}  // namespace

TEST_CASE("pricing::PriceDatabase rolls back a bad import and names the line or field", "[pricing]") {
  const auto file = fresh_database("bad_imports");
  const auto db = open_or_fail(file);
  const std::string before = database_digest(file);
  struct Case {
    ImportFormat format;
    const char* fixture_name;
    const char* expected;
  };
  for (const Case& bad : {Case{ImportFormat::skypilot, "skypilot_price_not_number.csv", ":3: field 'Price'"},
                          Case{ImportFormat::skypilot, "skypilot_negative_price.csv", ":3: field 'Price'"},
                          Case{ImportFormat::skypilot, "skypilot_duplicate_prices.csv", "duplicate"},
                          Case{ImportFormat::aws_spot_history, "aws_spot_history_bad_price.json", "/SpotPrice"},
                          Case{ImportFormat::aws_savings_plans_rates, "aws_savings_plans_rates_bad_rate.json",
                               "/searchResults/3/rate"},
                          Case{ImportFormat::ec2instances, "ec2instances_bad_reserved_key.json", "yrTerm2"},
                          Case{ImportFormat::fleetcast_csv, "fleetcast_prices_bad_option.csv", ":3: column 'option'"},
                          Case{ImportFormat::ec2instances, "skypilot_aws_vms.csv", "not valid JSON"}}) {
    INFO(bad.fixture_name);
    const auto result = db->import_file(bad.format, fixture(bad.fixture_name));
    REQUIRE_FALSE(result.ok());
    CHECK(result.status().code() == StatusCode::invalid_argument);
    CHECK_THAT(result.status().message(), Catch::Contains(bad.fixture_name) && Catch::Contains(bad.expected));
    CHECK(database_digest(file) == before);
  }
}

TEST_CASE("pricing::PriceDatabase rolls back when a write fails half-way through an import", "[pricing]") {
  // The parse succeeds; the database refuses a row part-way (a CHECK constraint), after others
  // were written in the same transaction.
  const auto file = fresh_database("half_written");
  const auto db = open_or_fail(file);
  const std::string before = database_digest(file);
  PriceCatalog catalog = builtin_price_catalog();
  catalog.instance_types.back().vcpus = -1;  // vcpus >= 0 is a schema constraint
  const auto result = db->import_catalog(catalog, "test", "constructed catalog", "hash:half-written");
  REQUIRE_FALSE(result.ok());
  CHECK_THAT(result.status().message(), Catch::Contains("half_written.db") && Catch::Contains("instance type"));
  CHECK(database_digest(file) == before);
}

TEST_CASE("pricing::PriceDatabase refuses a file that is not SQLite and leaves it alone", "[pricing]") {
  const auto file = fresh_database("not_sqlite");
  const std::string content = "InstanceType,Price\np5.48xlarge,55.04\n";
  std::ofstream(file) << content;
  const auto db = PriceDatabase::open(file);
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == StatusCode::failed_precondition);
  CHECK_THAT(db.status().message(), Catch::Contains("not_sqlite.db") && Catch::Contains("not a SQLite database"));
  std::ifstream in(file);
  CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == content);
}

TEST_CASE("pricing::PriceDatabase refuses another program's database, read-write or read-only, and leaves it alone",
          "[pricing]") {
  const auto file = fresh_database("results_database");
  REQUIRE(raw_exec(file, "CREATE TABLE runs (id INTEGER); CREATE TABLE parameter_sets (id INTEGER)") == SQLITE_OK);
  const std::string before = database_digest(file);
  for (const PriceDatabase::Mode mode : {PriceDatabase::Mode::read_write, PriceDatabase::Mode::read_only}) {
    PriceDatabase::Options options;
    options.mode = mode;
    const auto db = PriceDatabase::open(file, options);
    REQUIRE_FALSE(db.ok());
    CHECK(db.status().code() == StatusCode::failed_precondition);
    CHECK_THAT(db.status().message(),
               Catch::Contains("results_database.db: not a pricing database (it holds tables parameter_sets, runs and "
                               "no pricing schema); choose another database file"));
    CHECK(database_digest(file) == before);
    CHECK(schema_version_of(file) == 0);
  }
}

TEST_CASE("pricing::PriceDatabase refuses a hand-edited value of another type, naming the column and the value",
          "[pricing]") {
  // SQLite keeps whatever a column is given; before, 'abc' read as 0: a free instance.
  const auto file = fresh_database("hand_edited");
  const OfferQuery query;  // every offer of the built-in catalog a new database starts with
  REQUIRE(open_or_fail(file)->offers(query).ok());
  const std::string first_pool = " WHERE pool_id = (SELECT min(pool_id) FROM offers)";

  const auto refused_with = [&](const std::string& edit) {
    REQUIRE(raw_exec(file, edit) == SQLITE_OK);
    const auto rows = open_or_fail(file)->offers(query);
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.status().code() == StatusCode::failed_precondition);
    return rows.status().message();
  };
  CHECK_THAT(refused_with("UPDATE offers SET hourly_micro_usd = 'abc'" + first_pool),
             Catch::StartsWith(file.string() + ": reading offers: column 'hourly_micro_usd' holds text 'abc', "
                               "expected an integer (the database holds a value fleetcast never writes there"));
  CHECK_THAT(refused_with("UPDATE offers SET hourly_micro_usd = 2.5" + first_pool),
             Catch::Contains("column 'hourly_micro_usd' holds a real number '2.5', expected an integer"));
  CHECK_THAT(refused_with("UPDATE offers SET hourly_micro_usd = 7" + first_pool +
                          "; UPDATE instance_types SET gpu_memory_gib = 'lots' WHERE id = 1"),
             Catch::Contains("column 'gpu_memory_gib' holds text 'lots', expected a number"));
}

TEST_CASE("pricing::PriceDatabase refuses a newer schema version", "[pricing]") {
  const auto file = fresh_database("newer_schema");
  REQUIRE(raw_exec(file, "PRAGMA user_version = 99") == SQLITE_OK);
  const auto db = PriceDatabase::open(file);
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == StatusCode::failed_precondition);
  CHECK_THAT(db.status().message(), Catch::Contains("version 99") && Catch::Contains("newer"));
}

TEST_CASE("pricing::PriceDatabase upgrades an older schema in place, keeping its data", "[pricing]") {
  const auto file = fresh_database("older_schema");
  make_database_at_version(file, 1,
                           "INSERT INTO providers (name) VALUES ('aws');"
                           "INSERT INTO regions (provider_id, name) VALUES (1, 'us-east-1');"
                           "INSERT INTO instance_types (provider_id, name, vcpus, memory_gib, gpu_model, gpu_count, "
                           "gpu_memory_gib) VALUES (1, 'x1.test', 4, 16, 'T4', 1, 16);"
                           "INSERT INTO pools (instance_type_id, region_id, purchase_option) VALUES (1, 1, 'on_demand');"
                           "INSERT INTO offers (pool_id, valid_from, hourly_micro_usd) VALUES (1, 0, 1234567);");
  // Read-only connections do not upgrade; they say what to do.
  PriceDatabase::Options read_only;
  read_only.mode = PriceDatabase::Mode::read_only;
  const auto refused = PriceDatabase::open(file, read_only);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("older") && Catch::Contains("read-write"));

  const auto db = open_or_fail(file);
  OfferQuery query;
  query.instance_type = "x1.test";
  const auto rows = db->offers(query);
  REQUIRE(rows->size() == 1);
  CHECK(rows->front().offer.hourly == Money::from_micro_usd(1'234'567));
  CHECK_FALSE(db->find_instance_type("aws", "p5.48xlarge")->has_value());  // no seeding of an existing database
  CHECK(db->spot_risk(PoolKey{"aws", "us-east-1", "", "x1.test", PurchaseOption::spot}).ok());  // v2 table exists
  CHECK(schema_version_of(file) == PriceDatabase::schema_version());
}

TEST_CASE("pricing::PriceDatabase upgrades a version-2 database in place: it gains Savings Plan rates", "[pricing]") {
  const auto file = fresh_database("version_2_schema");
  make_database_at_version(file, 2,
                           "INSERT INTO providers (name, billing_granularity_s, billing_minimum_s) VALUES ('aws', 1, 60)");
  REQUIRE(raw_exec(file, "SELECT count(*) FROM savings_plan_rates") != SQLITE_OK);  // not there yet

  const auto db = open_or_fail(file);
  CHECK(db->billing_rule("aws")->minimum == Seconds{60});  // the version-2 data is kept
  CHECK(db->savings_plan_rates("aws")->empty());
  ImportOptions options;
  options.valid_from = *parse_instant("2025-11-30T00:00:00Z");
  REQUIRE(db->import_file(ImportFormat::aws_savings_plans_rates, fixture("aws_savings_plans_rates.json"), options).ok());
  CHECK(db->savings_plan_rates("aws")->size() == 8);
  CHECK(schema_version_of(file) == PriceDatabase::schema_version());
}

TEST_CASE("pricing::PriceDatabase opened read-only refuses imports", "[pricing]") {
  const auto file = fresh_database("read_only");
  open_or_fail(file).reset();
  const std::string before = database_digest(file);
  PriceDatabase::Options options;
  options.mode = PriceDatabase::Mode::read_only;
  const auto db = open_or_fail(file, options);
  CHECK(db->instance_types("aws")->size() > 5);
  const auto result = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::permission_denied);
  CHECK(database_digest(file) == before);
  CHECK(PriceDatabase::open(fresh_database("read_only_missing"), options).status().code() == StatusCode::not_found);
}

// File permissions do not stop root, so this case is hidden from the default run; ctest runs it
// as "write-protected file" and reports it skipped under root (tests/pricing/CMakeLists.txt).
TEST_CASE("pricing::PriceDatabase refuses to open a write-protected file for writing", "[.][permissions]") {
  REQUIRE(geteuid() != 0);
  const auto file = fresh_database("write_protected");
  open_or_fail(file).reset();
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::group_read);
  const auto db = PriceDatabase::open(file);
  std::filesystem::permissions(file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  REQUIRE_FALSE(db.ok());
  CHECK(db.status().code() == StatusCode::permission_denied);
}

namespace {

// A read-only file system, made through the file-system seam rather than file permissions (which
// do not bind root, the user CI runs as): every write SQLite tries is refused.
class RefusingWrites final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> create_file(const std::filesystem::path& path) override {
    return refused(path);
  }
  // As on a read-only mount: a folder that is there is fine, making one is refused.
  Status create_folders(const std::filesystem::path& path) override {
    return std::filesystem::is_directory(path) ? Status{} : refused(path);
  }
  Status sync_folder(const std::filesystem::path& path) override { return disk_.sync_folder(path); }
  Status rename(const std::filesystem::path&, const std::filesystem::path& to) override { return refused(to); }
  Status remove(const std::filesystem::path& path) override { return refused(path); }
  Status remove_all(const std::filesystem::path& path) override { return refused(path); }
  Status admit_database_io(FileOperation operation, const std::filesystem::path& file, std::size_t) override {
    return operation == FileOperation::write ? refused(file) : Status{};
  }

 private:
  static Status refused(const std::filesystem::path& path) {
    return permission_denied_error(path.string() + ": read-only file system");
  }
  PosixFileSystem disk_;
};

}  // namespace

TEST_CASE("pricing::PriceDatabase on a read-only disk refuses an import and keeps its data, as root too", "[pricing]") {
  const auto file = fresh_database("read_only_disk");
  REQUIRE(open_or_fail(file)->import_file(ImportFormat::fleetcast_csv, fixture("fleetcast_prices.csv")).ok());
  const std::string before = database_digest(file);
  RefusingWrites read_only_disk;
  PriceDatabase::Options options;
  options.file_system = &read_only_disk;
  const auto db = open_or_fail(file, options);  // opening writes nothing to an up-to-date database
  CHECK(db->instance_types("aws")->size() > 5);
  const auto result = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::permission_denied);
  CHECK_THAT(result.status().message(), Catch::Contains("read_only_disk.db"));
  CHECK(database_digest(file) == before);
  // The same import on the real disk then goes through.
  REQUIRE(open_or_fail(file)->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv")).ok());
  CHECK(database_digest(file) != before);
}

TEST_CASE("pricing::PriceDatabase makes its database's folder through the file-system seam, when asked", "[pricing]") {
  const std::filesystem::path dir = fresh_database("folder_through_seam").replace_extension("");
  std::filesystem::remove_all(dir);
  // Not asked (a path someone typed): a missing folder is refused, and nothing is made.
  const auto typo = PriceDatabase::open(dir / "new" / "prices.db", PriceDatabase::Options{});
  REQUIRE_FALSE(typo.ok());
  CHECK(typo.status().code() == StatusCode::not_found);
  CHECK_THAT(typo.status().message(), Catch::Contains("no folder " + (dir / "new").string()));
  CHECK_FALSE(std::filesystem::exists(dir));
  RefusingWrites read_only_disk;
  PriceDatabase::Options options;
  options.create_folders = true;
  options.file_system = &read_only_disk;
  const auto refused = PriceDatabase::open(dir / "new" / "prices.db", options);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.status().code() == StatusCode::permission_denied);
  CHECK_THAT(refused.status().message(), Catch::Contains((dir / "new").string()));
  CHECK_FALSE(std::filesystem::exists(dir));
  // The real disk makes it.
  options.file_system = nullptr;
  CHECK(open_or_fail(dir / "new" / "prices.db", options)->instance_types("aws").ok());
  CHECK(std::filesystem::is_directory(dir / "new"));
}

TEST_CASE("pricing::PriceDatabase refuses paths it cannot write even as root, leaving them as they were", "[pricing]") {
  // Faults that need no permissions, so they are tested whoever runs the tests.
  const std::filesystem::path dir = fresh_database("unwritable").replace_extension("");
  std::filesystem::remove_all(dir);
  const std::filesystem::path a_folder = dir / "folder.db";
  std::filesystem::create_directories(a_folder);
  const auto folder_db = PriceDatabase::open(a_folder);
  REQUIRE_FALSE(folder_db.ok());
  CHECK(folder_db.status().message() == a_folder.string() + ": is a directory, expected a database file (opening the pricing database)");
  CHECK(std::filesystem::is_empty(a_folder));

  const std::filesystem::path regular = dir / "regular";
  std::ofstream(regular) << "not a folder";
  PriceDatabase::Options create_folders;
  create_folders.create_folders = true;
  const auto under_file = PriceDatabase::open(regular / "prices.db", create_folders);
  REQUIRE_FALSE(under_file.ok());
  CHECK(under_file.status().code() == StatusCode::permission_denied);
  CHECK_THAT(under_file.status().message(), Catch::Contains(regular.string()) && Catch::Contains("Not a directory"));
  std::ifstream in(regular);
  CHECK(std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>()) == "not a folder");
}

TEST_CASE("pricing::PriceDatabase reports a locked database and leaves it unchanged", "[pricing]") {
  const auto file = fresh_database("locked");
  PriceDatabase::Options options;
  options.busy_timeout = std::chrono::milliseconds(100);
  const auto db = open_or_fail(file, options);
  const std::string before = database_digest(file);
  sqlite3* holder = nullptr;
  REQUIRE(sqlite3_open(file.c_str(), &holder) == SQLITE_OK);
  REQUIRE(sqlite3_exec(holder, "BEGIN IMMEDIATE; DELETE FROM import_log;", nullptr, nullptr, nullptr) == SQLITE_OK);
  const auto result = db->import_file(ImportFormat::skypilot, fixture("skypilot_aws_vms.csv"));
  REQUIRE_FALSE(result.ok());
  CHECK(result.status().code() == StatusCode::unavailable);
  CHECK_THAT(result.status().message(), Catch::Contains("locked.db") && Catch::Contains("another process"));
  // Readers are not blocked by the writer (WAL).
  CHECK(db->instance_types("aws").ok());
  REQUIRE(sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr) == SQLITE_OK);
  sqlite3_close(holder);
  CHECK(database_digest(file) == before);
}

TEST_CASE("pricing::PriceDatabase keeps the previous data when the importer is killed half-way", "[pricing]") {
  REQUIRE(std::filesystem::exists(real_ec2instances_file()));
  const auto file = fresh_database("killed_import");
  REQUIRE(open_or_fail(file)->import_file(ImportFormat::fleetcast_csv, fixture("fleetcast_prices.csv")).ok());
  const std::string before = database_digest(file);

  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child imports the real file and dies by SIGKILL inside the transaction, after
    // thousands of rows were written to the WAL.
    auto db = PriceDatabase::open(file);
    if (!db.ok()) _exit(3);
    ImportOptions options;
    options.on_row = [](std::int64_t rows) {
      if (rows == 5000) raise(SIGKILL);
    };
    (void)(*db)->import_file(ImportFormat::ec2instances, real_ec2instances_file(), options);
    _exit(4);  // not reached when the kill happens
  }
  int status = 0;
  REQUIRE(waitpid(child, &status, 0) == child);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGKILL);

  CHECK(database_digest(file) == before);
  const auto db = open_or_fail(file);
  CHECK_FALSE(db->find_instance_type("aws", "dl2q.24xlarge")->has_value());
  CHECK((*db->find_instance_type("coreweave", "gd-8xh100ib-i128")).has_value());
  // And the same import now succeeds in full.
  const auto retried = db->import_file(ImportFormat::ec2instances, real_ec2instances_file());
  REQUIRE(retried.ok());
  CHECK_FALSE(retried->already_imported);
}

TEST_CASE("pricing::PriceDatabase serves many readers while one importer writes", "[pricing]") {
  REQUIRE(std::filesystem::exists(real_ec2instances_file()));
  const auto file = fresh_database("readers_and_importer");
  open_or_fail(file).reset();
  std::atomic<bool> importing{true};
  std::atomic<int> failures{0};
  std::atomic<int> reads{0};
  std::vector<std::thread> readers;
  for (int i = 0; i < 3; ++i) {
    readers.emplace_back([&] {
      PriceDatabase::Options options;
      options.mode = PriceDatabase::Mode::read_only;
      auto db = PriceDatabase::open(file, options);
      if (!db.ok()) {
        ++failures;
        return;
      }
      OfferQuery query;
      query.gpu_model = "H100";
      do {
        const auto rows = (*db)->offers(query);
        if (!rows.ok() || rows->empty()) ++failures;
        ++reads;
      } while (importing);
    });
  }
  const auto imported = open_or_fail(file)->import_file(ImportFormat::ec2instances, real_ec2instances_file());
  importing = false;
  for (auto& reader : readers) reader.join();
  INFO(imported.status().to_string());
  CHECK(imported.ok());
  CHECK(failures == 0);
  CHECK(reads >= 3);
}
