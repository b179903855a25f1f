// PriceDatabase: the SQLite implementation of PriceSource, and the importers' write path.
//
// One connection per object, guarded by a mutex; statements are prepared once per connection and
// cached by their SQL text. Every write runs in one IMMEDIATE transaction that is rolled back on
// any error, so an import is all or nothing, and WAL journaling lets readers in other connections
// and processes go on while it runs. A process killed mid-import leaves an uncommitted WAL tail
// that SQLite discards on the next open.
#include <chrono>
#include <limits>
#include <map>
#include <mutex>
#include <system_error>

#include <nlohmann/json.hpp>

#include "core/json_text.h"
#include "core/csv.h"
#include "pricing/importers.h"
#include "pricing/offer_selection.h"
#include "pricing/schema.h"
#include "core/sqlite.h"

namespace fleetcast {
namespace {

using sqlite::Statement;
using sqlite::StatementUse;

constexpr std::string_view kBuiltinSource = "fleetcast built-in catalog";
constexpr std::string_view kBuiltinHash = "builtin:2025-11-30";

// ---- SQL ----

constexpr std::string_view kInsertProvider =
    "INSERT INTO providers (name) VALUES (?1) ON CONFLICT (name) DO UPDATE SET name = excluded.name RETURNING id";
constexpr std::string_view kSetBillingRule =
    "UPDATE providers SET billing_granularity_s = ?2, billing_minimum_s = ?3 WHERE id = ?1";
constexpr std::string_view kInsertRegion =
    "INSERT INTO regions (provider_id, name) VALUES (?1, ?2) "
    "ON CONFLICT (provider_id, name) DO UPDATE SET name = excluded.name RETURNING id";
constexpr std::string_view kInsertZone =
    "INSERT INTO zones (region_id, name) VALUES (?1, ?2) ON CONFLICT (region_id, name) DO NOTHING";
constexpr std::string_view kUpsertInstanceType =
    "INSERT INTO instance_types (provider_id, name, vcpus, memory_gib, gpu_model, gpu_count, gpu_memory_gib, "
    "gpu_fraction) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (provider_id, name) DO UPDATE SET "
    "vcpus = excluded.vcpus, memory_gib = excluded.memory_gib, gpu_model = excluded.gpu_model, "
    "gpu_count = excluded.gpu_count, gpu_memory_gib = excluded.gpu_memory_gib, gpu_fraction = excluded.gpu_fraction "
    "RETURNING id";
// A pool may name a type the import does not describe (spot history has only names): it gets a
// placeholder that a later import describing the type fills in.
constexpr std::string_view kInsertInstanceTypeName =
    "INSERT INTO instance_types (provider_id, name, vcpus, memory_gib, gpu_model, gpu_count, gpu_memory_gib) "
    "VALUES (?1, ?2, 0, 0, '', 0, 0) ON CONFLICT (provider_id, name) DO UPDATE SET name = excluded.name RETURNING id";
constexpr std::string_view kInsertPool =
    "INSERT INTO pools (instance_type_id, region_id, zone, purchase_option) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (instance_type_id, region_id, zone, purchase_option) DO UPDATE SET zone = excluded.zone "
    "RETURNING id";
constexpr std::string_view kUpsertOffer =
    "INSERT INTO offers (pool_id, term, reservation_class, payment, valid_from, hourly_micro_usd, "
    "upfront_micro_usd, hourly_is_effective) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
    "ON CONFLICT (pool_id, term, reservation_class, payment, valid_from) DO UPDATE SET "
    "hourly_micro_usd = excluded.hourly_micro_usd, upfront_micro_usd = excluded.upfront_micro_usd, "
    "hourly_is_effective = excluded.hourly_is_effective";
constexpr std::string_view kUpsertSpotPrice =
    "INSERT INTO spot_prices (pool_id, at, price_micro_usd) VALUES (?1, ?2, ?3) "
    "ON CONFLICT (pool_id, at) DO UPDATE SET price_micro_usd = excluded.price_micro_usd";
constexpr std::string_view kUpsertSpotRisk =
    "INSERT INTO spot_risks (pool_id, valid_from, bucket, savings_percent) VALUES (?1, ?2, ?3, ?4) "
    "ON CONFLICT (pool_id, valid_from) DO UPDATE SET bucket = excluded.bucket, "
    "savings_percent = excluded.savings_percent";
constexpr std::string_view kUpsertSavingsPlanRate =
    "INSERT INTO savings_plan_rates (provider_id, plan_type, term, payment, region_id, instance_type, valid_from, "
    "hourly_micro_usd) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT (provider_id, plan_type, term, payment, "
    "region_id, instance_type, valid_from) DO UPDATE SET hourly_micro_usd = excluded.hourly_micro_usd";
constexpr std::string_view kFindImport = "SELECT row_count FROM import_log WHERE format = ?1 AND file_hash = ?2";
constexpr std::string_view kLogImport =
    "INSERT INTO import_log (format, source, file_hash, imported_at, row_count) VALUES (?1, ?2, ?3, ?4, ?5)";

constexpr std::string_view kSelectInstanceTypes =
    "SELECT p.name, it.name, it.vcpus, it.memory_gib, it.gpu_model, it.gpu_count, it.gpu_memory_gib, "
    "it.gpu_fraction FROM instance_types it JOIN providers p ON p.id = it.provider_id "
    "WHERE p.name = ?1 AND (?2 = '' OR it.name = ?2) ORDER BY it.name";
constexpr std::string_view kSelectRegions =
    "SELECT r.name FROM regions r JOIN providers p ON p.id = r.provider_id "
    "WHERE p.name = ?1 AND EXISTS (SELECT 1 FROM pools po WHERE po.region_id = r.id) ORDER BY r.name";
// The latest price (valid_from <= ?8) per pool and terms, for the pools that match the query.
constexpr std::string_view kSelectOffers = R"sql(
WITH selected AS (
  SELECT po.id AS pool_id, p.name AS provider, r.name AS region, po.zone AS zone,
         po.purchase_option AS purchase_option, it.name AS instance_type, it.vcpus, it.memory_gib, it.gpu_model,
         it.gpu_count, it.gpu_memory_gib, it.gpu_fraction
  FROM pools po JOIN instance_types it ON it.id = po.instance_type_id
       JOIN regions r ON r.id = po.region_id JOIN providers p ON p.id = r.provider_id
  WHERE (?1 = '' OR p.name = ?1) AND (?2 IS NULL OR r.name IN (SELECT value FROM json_each(?2)))
    AND (?3 = '' OR it.name = ?3) AND (?4 = '' OR po.purchase_option = ?4)
    AND (?5 = '' OR it.gpu_model = ?5) AND it.gpu_count >= ?6 AND it.gpu_memory_gib >= ?7),
prices AS (
  SELECT pool_id, term, reservation_class, payment, valid_from, hourly_micro_usd, upfront_micro_usd,
         hourly_is_effective
  FROM offers WHERE valid_from <= ?8 AND pool_id IN (SELECT pool_id FROM selected)
  UNION ALL
  SELECT pool_id, '', '', '', at, price_micro_usd, 0, 0
  FROM spot_prices WHERE at <= ?8 AND pool_id IN (SELECT pool_id FROM selected)),
latest AS (
  SELECT *, ROW_NUMBER() OVER (PARTITION BY pool_id, term, reservation_class, payment
                               ORDER BY valid_from DESC) AS recency
  FROM prices)
SELECT s.provider, s.instance_type, s.vcpus, s.memory_gib, s.gpu_model, s.gpu_count, s.gpu_memory_gib,
       s.gpu_fraction, s.region, s.zone, s.purchase_option, l.term, l.reservation_class, l.payment,
       l.valid_from, l.hourly_micro_usd, l.upfront_micro_usd, l.hourly_is_effective
FROM latest l JOIN selected s ON s.pool_id = l.pool_id
WHERE l.recency = 1
)sql";
#define FLEETCAST_POOL_ID                                                                               \
  "(SELECT po.id FROM pools po JOIN instance_types it ON it.id = po.instance_type_id "                   \
  "JOIN regions r ON r.id = po.region_id JOIN providers p ON p.id = r.provider_id "                     \
  "WHERE p.name = ?1 AND r.name = ?2 AND po.zone = ?3 AND it.name = ?4 AND po.purchase_option = ?5)"
constexpr std::string_view kSelectSpotPrice =
    "SELECT price_micro_usd FROM spot_prices WHERE pool_id = " FLEETCAST_POOL_ID
    " AND at <= ?6 ORDER BY at DESC LIMIT 1";
constexpr std::string_view kSelectSpotHistory =
    "SELECT at, price_micro_usd FROM spot_prices WHERE pool_id = " FLEETCAST_POOL_ID " ORDER BY at";
constexpr std::string_view kSelectSpotRisk =
    "SELECT bucket, savings_percent, valid_from FROM spot_risks WHERE pool_id = " FLEETCAST_POOL_ID
    " ORDER BY valid_from DESC LIMIT 1";
#undef FLEETCAST_POOL_ID
// The latest rate per key (sorted afterwards: SQL's text order of payment names is not the enum's).
constexpr std::string_view kSelectSavingsPlanRates = R"sql(
WITH latest AS (
  SELECT sp.*, ROW_NUMBER() OVER (PARTITION BY plan_type, term, payment, region_id, instance_type
                                  ORDER BY valid_from DESC) AS recency
  FROM savings_plan_rates sp JOIN providers p ON p.id = sp.provider_id WHERE p.name = ?1)
SELECT l.plan_type, l.term, l.payment, r.name, l.instance_type, l.hourly_micro_usd, l.valid_from
FROM latest l JOIN regions r ON r.id = l.region_id
WHERE l.recency = 1
)sql";
constexpr std::string_view kSelectBillingRule =
    "SELECT billing_granularity_s, billing_minimum_s FROM providers WHERE name = ?1 "
    "AND billing_granularity_s IS NOT NULL";

Instant instant_of(std::int64_t seconds) { return Instant{Seconds{seconds}}; }
std::int64_t seconds_of(Instant instant) { return instant.time_since_epoch().count(); }

// Columns (first .. first+7): provider, name, vcpus, memory, gpu model, gpu count, gpu memory,
// gpu fraction, as both instance-type queries select them.
InstanceType read_instance_type(const Statement& row, int first) {
  InstanceType type;
  type.provider = row.text(first);
  type.name = row.text(first + 1);
  type.vcpus = static_cast<int>(row.int64(first + 2));
  type.memory_gib = row.real(first + 3);
  type.gpu_model = row.text(first + 4);
  type.gpu_count = static_cast<int>(row.int64(first + 5));
  type.gpu_memory_gib = row.real(first + 6);
  type.gpu_fraction = row.real(first + 7);
  return type;
}

// The first row of a query that returns at most one, or nullopt.
template <typename Row>
Result<std::optional<Row>> first_of(Result<std::vector<Row>> rows) {
  if (!rows.ok()) return rows.status();
  if (rows->empty()) return std::optional<Row>{};
  return std::optional<Row>{std::move(rows->front())};
}

void bind_pool(Statement& statement, const PoolKey& pool) {
  statement.bind(1, pool.provider).bind(2, pool.region).bind(3, pool.zone).bind(4, pool.instance_type);
  statement.bind(5, purchase_option_name(pool.option));
}

}  // namespace

struct PriceDatabase::Impl {
  std::filesystem::path file;
  Options open_options;
  sqlite::Connection connection;
  std::mutex mutex;  // guards the connection and the statement cache
  std::map<std::string_view, Statement> statements;

  Impl(std::filesystem::path path, Options options) : file(std::move(path)), open_options(options) {}

  // A cached prepared statement for one of the SQL constants above (keyed by their address and
  // length, which are stable). Caller holds `mutex`.
  Result<Statement*> statement(std::string_view sql) {
    if (auto it = statements.find(sql); it != statements.end()) return &it->second;
    Result<Statement> prepared = sqlite::prepare(connection.get(), file, sql);
    if (!prepared.ok()) return prepared.status();
    return &statements.emplace(sql, std::move(prepared).value()).first->second;
  }

  Status exec(const char* sql, std::string_view what) {
    return sqlite::exec(connection.get(), file, sql, what);
  }

  // Runs `body` in one IMMEDIATE transaction: committed when it succeeds, rolled back otherwise.
  template <typename Body>
  auto in_transaction(std::string_view what, Body body) -> decltype(body()) {
    if (Status status = exec("BEGIN IMMEDIATE", what); !status.ok()) return status;
    auto result = body();
    if (result.ok()) {
      if (Status status = exec("COMMIT", what); status.ok()) return result;
      else result = status;
    }
    (void)exec("ROLLBACK", what);  // the error that made us roll back is the one to report
    return result;
  }

  // A row-returning statement's single integer (an id from RETURNING, a count).
  Result<std::int64_t> single_int(Statement& statement, std::string_view what) {
    StatementUse use(statement);
    Result<bool> row = statement.step(what);
    if (!row.ok()) return row.status();
    if (!*row) return internal_error(file.string() + ": " + std::string(what) + ": no row returned");
    const std::int64_t value = statement.int64(0);
    if (Status status = statement.value_error(what); !status.ok()) return status;
    return value;
  }

  class IdCache;
  class CatalogWriter;

  // Runs an INSERT ... RETURNING id with the parameters `bind` sets; the caller holds the mutex.
  template <typename Bind>
  Result<std::int64_t> insert_returning_id(std::string_view sql, const std::string& what, Bind bind) {
    Result<Statement*> insert = statement(sql);
    if (!insert.ok()) return insert.status();
    bind(**insert);
    return single_int(**insert, what);
  }

  // Runs a query under the mutex with the parameters `bind` sets, and `read`s every row.
  template <typename Row, typename Bind, typename Read>
  Result<std::vector<Row>> select_all(std::string_view sql, std::string_view what, Bind bind, Read read) {
    std::lock_guard lock(mutex);
    Result<Statement*> select = statement(sql);
    if (!select.ok()) return select.status();
    StatementUse use(**select);
    bind(*use);
    std::vector<Row> rows;
    for (;;) {
      Result<bool> row = use->step(what);
      if (!row.ok()) return row.status();
      if (!*row) return rows;
      rows.push_back(read(*use));
      if (Status status = use->value_error(what); !status.ok()) return status;
    }
  }

  // Writes a catalog and logs it, unless the log shows the same file imported before; the caller
  // holds the mutex and a transaction.
  Result<ImportSummary> record_import(const PriceCatalog& catalog, std::string_view format_name, std::string source,
                                      std::string file_hash, const ImportOptions& options);
};

// The ids of rows a catalog refers to, looked up or created once per write.
// Thread-safety: used by one write, under the database mutex.
class PriceDatabase::Impl::IdCache {
 public:
  explicit IdCache(Impl& impl) : impl_(impl) {}

  Result<std::int64_t> provider(const std::string& name) {
    return cached(providers_, name, [&] {
      return impl_.insert_returning_id(kInsertProvider, "adding provider " + name,
                                       [&](Statement& insert) { insert.bind(1, name); });
    });
  }

  Result<std::int64_t> region(const std::string& provider_name, const std::string& name) {
    return cached(regions_, provider_name + "\n" + name, [&]() -> Result<std::int64_t> {
      Result<std::int64_t> provider_id = provider(provider_name);
      if (!provider_id.ok()) return provider_id.status();
      return impl_.insert_returning_id(kInsertRegion, "adding region " + name,
                                       [&](Statement& insert) { insert.bind(1, *provider_id).bind(2, name); });
    });
  }

  Result<std::int64_t> instance_type(const InstanceType& type) {
    Result<std::int64_t> provider_id = provider(type.provider);
    if (!provider_id.ok()) return provider_id.status();
    Result<std::int64_t> id =
        impl_.insert_returning_id(kUpsertInstanceType, "writing instance type " + type.name, [&](Statement& upsert) {
          upsert.bind(1, *provider_id).bind(2, type.name).bind(3, std::int64_t{type.vcpus}).bind(4, type.memory_gib);
          upsert.bind(5, type.gpu_model).bind(6, std::int64_t{type.gpu_count}).bind(7, type.gpu_memory_gib);
          upsert.bind(8, type.gpu_fraction);
        });
    if (id.ok()) instance_types_[type.provider + "\n" + type.name] = *id;
    return id;
  }

  Result<std::int64_t> pool(const PoolKey& key) {
    const std::string cache_key = key.provider + "\n" + key.region + "\n" + key.zone + "\n" + key.instance_type +
                                  "\n" + std::string(purchase_option_name(key.option));
    return cached(pools_, cache_key, [&]() -> Result<std::int64_t> {
      Result<std::int64_t> type_id = instance_type_by_name(key.provider, key.instance_type);
      if (!type_id.ok()) return type_id.status();
      Result<std::int64_t> region_id = region(key.provider, key.region);
      if (!region_id.ok()) return region_id.status();
      if (!key.zone.empty()) {
        Result<Statement*> zone = impl_.statement(kInsertZone);
        if (!zone.ok()) return zone.status();
        (*zone)->bind(1, *region_id).bind(2, key.zone);
        if (Status status = (*zone)->run("adding zone " + key.zone); !status.ok()) return status;
      }
      return impl_.insert_returning_id(kInsertPool, "adding a pool of " + key.instance_type, [&](Statement& insert) {
        insert.bind(1, *type_id).bind(2, *region_id).bind(3, key.zone).bind(4, purchase_option_name(key.option));
      });
    });
  }

 private:
  template <typename Create>
  Result<std::int64_t> cached(std::map<std::string, std::int64_t>& cache, const std::string& key, Create create) {
    if (auto it = cache.find(key); it != cache.end()) return it->second;
    Result<std::int64_t> id = create();
    if (id.ok()) cache.emplace(key, *id);
    return id;
  }

  Result<std::int64_t> instance_type_by_name(const std::string& provider_name, const std::string& name) {
    return cached(instance_types_, provider_name + "\n" + name, [&]() -> Result<std::int64_t> {
      Result<std::int64_t> provider_id = provider(provider_name);
      if (!provider_id.ok()) return provider_id.status();
      return impl_.insert_returning_id(kInsertInstanceTypeName, "adding instance type " + name,
                                       [&](Statement& insert) { insert.bind(1, *provider_id).bind(2, name); });
    });
  }

  Impl& impl_;
  std::map<std::string, std::int64_t> providers_, regions_, instance_types_, pools_;
};

// Writes one catalog's rows, each kind with its prepared statement, counting the rows written.
// Thread-safety: used by one write, under the database mutex and in its transaction.
class PriceDatabase::Impl::CatalogWriter {
 public:
  CatalogWriter(Impl& impl, const ImportOptions& options) : impl_(impl), ids_(impl), options_(options) {}

  Result<std::int64_t> write(const PriceCatalog& catalog) {
    for (const InstanceType& type : catalog.instance_types) {
      if (Result<std::int64_t> id = ids_.instance_type(type); !id.ok()) return id.status();
      written();
    }
    Status status = write_each(kUpsertOffer, catalog.offers, "writing an offer");
    if (status.ok()) status = write_each(kUpsertSpotPrice, catalog.spot_prices, "writing a spot price");
    if (status.ok()) status = write_each(kUpsertSpotRisk, catalog.spot_risks, "writing a spot risk");
    if (status.ok()) status = write_each(kSetBillingRule, catalog.billing_rules, "writing a billing rule");
    if (status.ok()) status = write_each(kUpsertSavingsPlanRate, catalog.savings_plan_rates, "writing a Savings Plan rate");
    if (!status.ok()) return status;
    return rows_;
  }

 private:
  // Runs `sql` once per item with the parameters bind() sets for it (which may fail: a pool lookup).
  template <typename Item>
  Status write_each(std::string_view sql, const std::vector<Item>& items, std::string_view what) {
    Result<Statement*> statement = impl_.statement(sql);
    if (!statement.ok()) return statement.status();
    for (const Item& item : items) {
      if (Status status = bind(**statement, item); !status.ok()) {
        (*statement)->reset();
        return status;
      }
      if (Status status = (*statement)->run(what); !status.ok()) return status;
      written();
    }
    return {};
  }

  Status bind(Statement& insert, const Offer& offer) {
    const auto& terms = offer.reservation;
    insert.bind(2, terms ? reservation_term_name(terms->term) : "");
    insert.bind(3, terms ? reservation_class_name(terms->reservation_class) : "");
    insert.bind(4, terms ? upfront_payment_name(terms->payment) : "");
    insert.bind(5, seconds_of(offer.valid_from)).bind(6, offer.hourly.micro_usd()).bind(7, offer.upfront.micro_usd());
    insert.bind(8, std::int64_t{offer.hourly_is_effective ? 1 : 0});
    return bind_pool_id(insert, offer.pool);
  }

  Status bind(Statement& insert, const SpotPricePoint& point) {
    insert.bind(2, seconds_of(point.at)).bind(3, point.price.micro_usd());
    return bind_pool_id(insert, point.pool);
  }

  Status bind(Statement& insert, const SpotRisk& risk) {
    insert.bind(2, seconds_of(risk.valid_from)).bind(3, interruption_bucket_name(risk.bucket));
    if (risk.savings_percent) {
      insert.bind(4, std::int64_t{*risk.savings_percent});
    } else {
      insert.bind_null(4);
    }
    return bind_pool_id(insert, risk.pool);
  }

  Status bind(Statement& update, const BillingRule& rule) {
    Result<std::int64_t> provider_id = ids_.provider(rule.provider);
    if (!provider_id.ok()) return provider_id.status();
    update.bind(1, *provider_id).bind(2, rule.granularity.count()).bind(3, rule.minimum.count());
    return {};
  }

  Status bind(Statement& insert, const SavingsPlanRate& rate) {
    Result<std::int64_t> provider_id = ids_.provider(rate.provider);
    if (!provider_id.ok()) return provider_id.status();
    Result<std::int64_t> region_id = ids_.region(rate.provider, rate.region);
    if (!region_id.ok()) return region_id.status();
    insert.bind(1, *provider_id).bind(2, savings_plan_type_name(rate.type));
    insert.bind(3, reservation_term_name(rate.term)).bind(4, upfront_payment_name(rate.payment));
    insert.bind(5, *region_id).bind(6, rate.instance_type).bind(7, seconds_of(rate.valid_from));
    insert.bind(8, rate.hourly.micro_usd());
    return {};
  }

  // Binds the pool's id as parameter 1.
  Status bind_pool_id(Statement& insert, const PoolKey& pool) {
    Result<std::int64_t> pool_id = ids_.pool(pool);
    if (!pool_id.ok()) return pool_id.status();
    insert.bind(1, *pool_id);
    return {};
  }

  void written() {
    ++rows_;
    if (options_.on_row) options_.on_row(rows_);
  }

  Impl& impl_;
  IdCache ids_;
  const ImportOptions& options_;
  std::int64_t rows_ = 0;
};

Result<ImportSummary> PriceDatabase::Impl::record_import(const PriceCatalog& catalog, std::string_view format_name,
                                                         std::string source, std::string file_hash,
                                                         const ImportOptions& options) {
  ImportSummary summary{std::move(source), std::move(file_hash), 0, false};
  Result<Statement*> find = statement(kFindImport);
  if (!find.ok()) return find.status();
  {
    StatementUse use(**find);
    use->bind(1, format_name).bind(2, summary.file_hash);
    Result<bool> found = use->step("reading the import log");
    if (!found.ok()) return found.status();
    if (*found) {
      summary.already_imported = true;
      return summary;
    }
  }
  Result<std::int64_t> rows = CatalogWriter(*this, options).write(catalog);
  if (!rows.ok()) return rows.status();
  summary.rows = *rows;
  Result<Statement*> log = statement(kLogImport);
  if (!log.ok()) return log.status();
  const auto now = std::chrono::time_point_cast<Seconds>(std::chrono::system_clock::now());
  (*log)->bind(1, format_name).bind(2, summary.source).bind(3, summary.file_hash).bind(4, seconds_of(now));
  (*log)->bind(5, *rows);
  if (Status status = (*log)->run("writing the import log"); !status.ok()) return status;
  return summary;
}

PriceDatabase::PriceDatabase(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
PriceDatabase::~PriceDatabase() = default;

int PriceDatabase::schema_version() noexcept { return pricing::schema::latest_version(); }

namespace {

// A database without a pricing schema (version 0) is new, and becomes one, only when it holds no
// table: one with tables is another database (a batch results database, a model store), which a
// pricing command must not turn into a price catalog. Read-only, an empty one is no catalog either.
Status refuse_other_database(sqlite3* db, const std::filesystem::path& file, bool read_only) {
  Result<std::string> names = sqlite::other_table_names(db, file);
  if (!names.ok()) return names.status();
  if (!names->empty()) {
    return failed_precondition_error(file.string() + ": not a pricing database (it holds tables " + *names +
                                     " and no pricing schema); choose another database file");
  }
  if (read_only) return not_found_error(file.string() + ": an empty database, no pricing database (import a price file to create one)");
  return {};
}

}  // namespace

Result<std::unique_ptr<PriceDatabase>> PriceDatabase::open(const std::filesystem::path& file, Options options) {
  auto impl = std::make_unique<Impl>(file, options);
  const bool read_only = options.mode == Mode::read_only;
  std::error_code ec;
  if (read_only && !std::filesystem::exists(file, ec)) {
    return not_found_error(file.string() + ": no pricing database there (import a price file to create one)");
  }
  if (!read_only && file.has_parent_path()) {
    if (options.create_folders) {  // the folder too goes through the seam
      PosixFileSystem disk;
      FileSystem& files = options.file_system != nullptr ? *options.file_system : disk;
      if (Status status = files.create_folders(file.parent_path()); !status.ok()) return status;
    } else if (!std::filesystem::is_directory(file.parent_path(), ec)) {
      return not_found_error(file.string() + ": no folder " + file.parent_path().string() +
                             " to create the pricing database in; create it first, or check the path");
    }
  }
  const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                    SQLITE_OPEN_NOMUTEX;
  auto connection = sqlite::open(file, flags, options.busy_timeout, "opening the pricing database",
                                 options.file_system);
  if (!connection.ok()) return connection.status();
  impl->connection = std::move(*connection);
  sqlite3* raw = impl->connection.get();
  if (!read_only && sqlite3_db_readonly(raw, "main") == 1) {
    return permission_denied_error(file.string() +
                                   ": the pricing database is read-only (file permissions); open it read-only "
                                   "to query it, or make it writable to import");
  }
  Result<int> version = pricing::schema::read_version(raw, file);
  if (!version.ok()) return version.status();
  const int latest = pricing::schema::latest_version();
  if (*version > latest) return pricing::schema::newer_version_error(file, *version);
  if (*version == 0) {
    if (Status status = refuse_other_database(raw, file, read_only); !status.ok()) return status;
  }
  if (read_only) {
    if (*version < latest) {
      return failed_precondition_error(file.string() + ": the pricing database has schema version " +
                                       std::to_string(*version) + ", older than " + std::to_string(latest) +
                                       "; open it read-write once to upgrade it");
    }
    return std::unique_ptr<PriceDatabase>(new PriceDatabase(std::move(impl)));
  }
  // WAL: readers in other connections go on while one writer imports. NORMAL sync is durable
  // enough in WAL mode (a power cut may lose the last commit, never corrupt the file).
  if (Status status = impl->exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON",
                                 "setting up the connection");
      !status.ok()) {
    return status;
  }
  if (*version < latest) {
    Result<bool> migrated = impl->in_transaction("upgrading the schema", [&]() -> Result<bool> {
      // Read the version again inside the write lock: another process may have upgraded it.
      Result<int> current = pricing::schema::read_version(raw, file);
      if (!current.ok()) return current.status();
      if (Status status = pricing::schema::migrate(raw, file, latest); !status.ok()) return status;
      if (*current == 0 && options.seed_builtin_catalog) {
        Result<ImportSummary> seeded = impl->record_import(builtin_price_catalog(), "builtin",
                                                           std::string(kBuiltinSource), std::string(kBuiltinHash), {});
        if (!seeded.ok()) return seeded.status();
      }
      return true;
    });
    if (!migrated.ok()) return migrated.status();
  }
  return std::unique_ptr<PriceDatabase>(new PriceDatabase(std::move(impl)));
}

Result<ImportSummary> PriceDatabase::import_catalog(const PriceCatalog& catalog, std::string_view format_name,
                                                    std::string source, std::string file_hash,
                                                    const ImportOptions& options) {
  std::lock_guard lock(impl_->mutex);
  if (impl_->open_options.mode == Mode::read_only) {
    return permission_denied_error(impl_->file.string() + ": opened read-only; cannot import " + source);
  }
  return impl_->in_transaction("importing " + source, [&]() {
    return impl_->record_import(catalog, format_name, source, file_hash, options);
  });
}

Result<ImportSummary> PriceDatabase::import_file(ImportFormat format, const std::filesystem::path& file,
                                                 const ImportOptions& options) {
  Result<std::string> text = csv::read_text_file(file);
  if (!text.ok()) return text.status();
  Result<PriceCatalog> catalog = pricing::parse_price_text(format, *text, file, options);
  if (!catalog.ok()) return catalog.status();
  // The import's identity is the file and the options that shape what it writes: the same file
  // imported for another cloud, or with prices from another date, is another import. Defaults
  // add nothing, so that databases written before keep recognising their imports.
  std::string identity = *text;
  if (options.provider != ImportOptions{}.provider) identity += "\n--provider " + options.provider;
  if (options.valid_from) identity += "\n--valid-from " + format_instant(*options.valid_from);
  return import_catalog(*catalog, import_format_name(format), file.string(), pricing::file_hash(identity), options);
}

Result<std::vector<InstanceType>> PriceDatabase::instance_types(std::string_view provider) const {
  return impl_->select_all<InstanceType>(
      kSelectInstanceTypes, "reading instance types",
      [&](Statement& select) { select.bind(1, provider).bind(2, std::string_view{}); },
      [](const Statement& row) { return read_instance_type(row, 0); });
}

Result<std::optional<InstanceType>> PriceDatabase::find_instance_type(std::string_view provider,
                                                                      std::string_view name) const {
  if (name.empty()) return std::optional<InstanceType>{};  // '' selects every type
  return first_of(impl_->select_all<InstanceType>(
      kSelectInstanceTypes, "reading an instance type",
      [&](Statement& select) { select.bind(1, provider).bind(2, name); },
      [](const Statement& row) { return read_instance_type(row, 0); }));
}

Result<std::vector<std::string>> PriceDatabase::regions(std::string_view provider) const {
  return impl_->select_all<std::string>(
      kSelectRegions, "reading regions", [&](Statement& select) { select.bind(1, provider); },
      [](const Statement& row) { return row.text(0); });
}

Result<std::vector<OfferRow>> PriceDatabase::offers(const OfferQuery& query) const {
  const auto bind = [&](Statement& select) {
    select.bind(1, query.provider);
    if (query.regions.empty()) {
      select.bind_null(2);
    } else {
      select.bind(2, json_text::dump(nlohmann::json(query.regions)));
    }
    select.bind(3, query.instance_type).bind(4, query.option ? purchase_option_name(*query.option) : "");
    select.bind(5, query.gpu_model).bind(6, std::int64_t{query.min_gpu_count}).bind(7, query.min_gpu_memory_gib);
    select.bind(8, query.at ? seconds_of(*query.at) : std::numeric_limits<std::int64_t>::max());
  };
  const auto read = [](const Statement& row) {
    OfferRow result;
    result.instance_type = read_instance_type(row, 0);
    Offer& offer = result.offer;
    offer.pool.provider = result.instance_type.provider;
    offer.pool.instance_type = result.instance_type.name;
    offer.pool.region = row.text(8);
    offer.pool.zone = row.text(9);
    // The CHECK constraints admit only the names the parse functions accept.
    offer.pool.option = parse_purchase_option(row.text(10)).value_or(PurchaseOption::on_demand);
    if (offer.pool.option == PurchaseOption::reserved) {
      offer.reservation = ReservationTerms{parse_reservation_term(row.text(11)).value_or(ReservationTerm::one_year),
                                           parse_reservation_class(row.text(12)).value_or(ReservationClass::standard),
                                           parse_upfront_payment(row.text(13)).value_or(UpfrontPayment::no_upfront)};
    }
    offer.valid_from = instant_of(row.int64(14));
    offer.hourly = Money::from_micro_usd(row.int64(15));
    offer.upfront = Money::from_micro_usd(row.int64(16));
    offer.hourly_is_effective = row.int64(17) != 0;
    return result;
  };
  Result<std::vector<OfferRow>> rows = impl_->select_all<OfferRow>(kSelectOffers, "reading offers", bind, read);
  if (rows.ok()) pricing::sort_offer_rows(*rows);
  return rows;
}

Result<std::optional<Money>> PriceDatabase::spot_price(const PoolKey& pool, Instant at) const {
  return first_of(impl_->select_all<Money>(
      kSelectSpotPrice, "reading a spot price",
      [&](Statement& select) {
        bind_pool(select, pool);
        select.bind(6, seconds_of(at));
      },
      [](const Statement& row) { return Money::from_micro_usd(row.int64(0)); }));
}

Result<std::vector<SpotPricePoint>> PriceDatabase::spot_price_history(const PoolKey& pool) const {
  return impl_->select_all<SpotPricePoint>(
      kSelectSpotHistory, "reading spot price history", [&](Statement& select) { bind_pool(select, pool); },
      [&](const Statement& row) {
        return SpotPricePoint{pool, instant_of(row.int64(0)), Money::from_micro_usd(row.int64(1))};
      });
}

Result<std::optional<SpotRisk>> PriceDatabase::spot_risk(const PoolKey& pool) const {
  return first_of(impl_->select_all<SpotRisk>(
      kSelectSpotRisk, "reading spot risk", [&](Statement& select) { bind_pool(select, pool); },
      [&](const Statement& row) {
        SpotRisk risk{pool, parse_interruption_bucket(row.text(0)).value_or(InterruptionBucket::over_20_percent),
                      std::nullopt, instant_of(row.int64(2))};
        if (!row.is_null(1)) risk.savings_percent = static_cast<int>(row.int64(1));
        return risk;
      }));
}

Result<BillingRule> PriceDatabase::billing_rule(std::string_view provider) const {
  Result<std::optional<BillingRule>> rule = first_of(impl_->select_all<BillingRule>(
      kSelectBillingRule, "reading a billing rule", [&](Statement& select) { select.bind(1, provider); },
      [&](const Statement& row) {
        return BillingRule{std::string(provider), Seconds{row.int64(0)}, Seconds{row.int64(1)}};
      }));
  if (!rule.ok()) return rule.status();
  if (!rule->has_value()) {
    return not_found_error(impl_->file.string() + ": no billing rule for provider '" + std::string(provider) + "'");
  }
  return **rule;
}

Result<std::vector<SavingsPlanRate>> PriceDatabase::savings_plan_rates(std::string_view provider) const {
  Result<std::vector<SavingsPlanRate>> rates = impl_->select_all<SavingsPlanRate>(
      kSelectSavingsPlanRates, "reading Savings Plan rates", [&](Statement& select) { select.bind(1, provider); },
      [&](const Statement& row) {
        // The CHECK constraints admit only the names the parse functions accept.
        SavingsPlanRate rate;
        rate.provider = std::string(provider);
        rate.type = parse_savings_plan_type(row.text(0)).value_or(SavingsPlanType::compute);
        rate.term = parse_reservation_term(row.text(1)).value_or(ReservationTerm::one_year);
        rate.payment = parse_upfront_payment(row.text(2)).value_or(UpfrontPayment::no_upfront);
        rate.region = row.text(3);
        rate.instance_type = row.text(4);
        rate.hourly = Money::from_micro_usd(row.int64(5));
        rate.valid_from = instant_of(row.int64(6));
        return rate;
      });
  if (rates.ok()) pricing::sort_savings_plan_rates(*rates);
  return rates;
}

}  // namespace fleetcast
