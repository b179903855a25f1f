// Prices of GPU cloud capacity: instance types, offers per pool and purchase option, spot price
// history and risk, and each provider's billing rule, behind the PriceSource interface.
//
// Implementations: the SQLite catalog (PriceDatabase::open), an in-memory one for tests and
// embedders (InMemoryPriceSource), and the built-in default catalog that ships with fleetcast
// (make_builtin_price_source, builtin_price_catalog).
//
// Units: money is Money (integer micro-USD); rates are per instance-hour; instants are UTC seconds.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fleetcast/file_system.h"
#include "fleetcast/money.h"
#include "fleetcast/status.h"
#include "fleetcast/time.h"

namespace fleetcast {

enum class PurchaseOption { on_demand, reserved, spot };
/// "on_demand", "reserved", "spot".
std::string_view purchase_option_name(PurchaseOption option) noexcept;
std::optional<PurchaseOption> parse_purchase_option(std::string_view name) noexcept;

enum class ReservationTerm { one_year, three_years };
enum class ReservationClass { standard, convertible };
enum class UpfrontPayment { no_upfront, partial_upfront, all_upfront };
std::string_view reservation_term_name(ReservationTerm term) noexcept;      // "1y", "3y"
std::string_view reservation_class_name(ReservationClass cls) noexcept;     // "standard", ...
std::string_view upfront_payment_name(UpfrontPayment payment) noexcept;     // "no_upfront", ...
std::optional<ReservationTerm> parse_reservation_term(std::string_view name) noexcept;
std::optional<ReservationClass> parse_reservation_class(std::string_view name) noexcept;
std::optional<UpfrontPayment> parse_upfront_payment(std::string_view name) noexcept;
/// AWS's own spelling in its APIs (a Savings Plan's paymentOption, a reservation's OfferingType):
/// "No Upfront", "Partial Upfront", "All Upfront".
std::string_view aws_payment_option_name(UpfrontPayment payment) noexcept;
std::optional<UpfrontPayment> parse_aws_payment_option(std::string_view name) noexcept;
Seconds reservation_term_length(ReservationTerm term) noexcept;  // 365 d or 3 x 365 d

/// AWS Savings Plans for EC2: Compute (any family, any region) or EC2 Instance (one family in one
/// region). "compute", "ec2_instance".
enum class SavingsPlanType { compute, ec2_instance };
std::string_view savings_plan_type_name(SavingsPlanType type) noexcept;
std::optional<SavingsPlanType> parse_savings_plan_type(std::string_view name) noexcept;
/// An instance type's family, as EC2 Instance Savings Plans and launch delays name it: the part
/// of the name before the first '.' ("p5.48xlarge" -> "p5"); the whole name when it has none.
std::string_view instance_family(std::string_view instance_type) noexcept;

/// The AWS Spot Instance Advisor's frequency-of-interruption buckets (share of instances
/// interrupted per month). Other providers' risk figures are mapped onto the same scale.
enum class InterruptionBucket { under_5_percent, from_5_to_10_percent, from_10_to_15_percent,
                                from_15_to_20_percent, over_20_percent };
/// "<5%", "5-10%", "10-15%", "15-20%", ">20%" (the Spot Advisor's own spelling).
std::string_view interruption_bucket_name(InterruptionBucket bucket) noexcept;
std::optional<InterruptionBucket> parse_interruption_bucket(std::string_view name) noexcept;

/// An instance type as the provider sells it. GPU memory is the total over all GPUs.
struct InstanceType {
  std::string provider;       // "aws", "gcp", "azure", ...
  std::string name;           // "p5.48xlarge"
  int vcpus = 0;
  double memory_gib = 0;
  std::string gpu_model;      // canonical short name: "H100", "A100-80GB", "L4", ...
  int gpu_count = 0;          // whole GPUs; 0 for an instance holding only part of one GPU
  double gpu_memory_gib = 0;  // total across the instance's GPUs
  /// The share of one GPU for a fractional-GPU instance (g6f.large: 0.125), else 0.
  double gpu_fraction = 0;
  friend bool operator==(const InstanceType&, const InstanceType&) = default;
};

/// The short GPU model name fleetcast uses (the SkyPilot AcceleratorName style) for a vendor's
/// long name and the memory of one GPU: ("NVIDIA A100", 80) -> "A100-80GB", ("NVIDIA Tesla V100",
/// 16) -> "V100", ("NVIDIA T4 Tensor Core", 16) -> "T4". Unknown names lose their vendor prefix
/// and spaces ("AWS Inferentia2" -> "Inferentia2").
std::string canonical_gpu_model(std::string_view vendor_name, double memory_per_gpu_gib);

/// A pool: the unit of placement and pricing. `zone` is empty for a regional pool (a price that
/// holds in every zone of the region, or a figure the source gave only per region).
struct PoolKey {
  std::string provider;
  std::string region;
  std::string zone;
  std::string instance_type;
  PurchaseOption option = PurchaseOption::on_demand;
  friend bool operator==(const PoolKey&, const PoolKey&) = default;
  friend auto operator<=>(const PoolKey&, const PoolKey&) = default;
};

/// The terms of a reservation; absent for on-demand and spot offers.
struct ReservationTerms {
  ReservationTerm term = ReservationTerm::one_year;
  ReservationClass reservation_class = ReservationClass::standard;
  UpfrontPayment payment = UpfrontPayment::no_upfront;
  friend bool operator==(const ReservationTerms&, const ReservationTerms&) = default;
  friend auto operator<=>(const ReservationTerms&, const ReservationTerms&) = default;
};

/// One price for one pool: on-demand, one reservation's terms, or the latest spot price.
///
/// A reservation is priced either as (upfront, recurring hourly) or, when the source gives only
/// that, as an effective hourly rate with the upfront already amortised over the term
/// (`hourly_is_effective`, then `upfront` is zero). effective_hourly_cost() reads both alike.
struct Offer {
  PoolKey pool;
  std::optional<ReservationTerms> reservation;  // set exactly when pool.option is reserved
  Money hourly;                                 // USD per instance-hour
  Money upfront;                                // reserved only; zero otherwise
  bool hourly_is_effective = false;
  Instant valid_from;                           // the date the price holds from
  friend bool operator==(const Offer&, const Offer&) = default;
};

/// One point of a spot pool's price history: the price in effect from `at` until the next point.
struct SpotPricePoint {
  PoolKey pool;  // option is spot
  Instant at;
  Money price;   // USD per instance-hour
  friend bool operator==(const SpotPricePoint&, const SpotPricePoint&) = default;
};

/// How risky a spot pool is: the interruption bucket and the advertised saving over on-demand.
struct SpotRisk {
  PoolKey pool;  // option is spot
  InterruptionBucket bucket = InterruptionBucket::over_20_percent;
  std::optional<int> savings_percent;  // 0..100
  Instant valid_from;
  friend bool operator==(const SpotRisk&, const SpotRisk&) = default;
};

/// How a provider bills a running instance: in steps of `granularity`, at least `minimum`.
struct BillingRule {
  std::string provider;
  Seconds granularity{1};
  Seconds minimum{60};
  friend bool operator==(const BillingRule&, const BillingRule&) = default;
};

/// One Savings Plan rate: what an instance-hour of one type in one region costs when a plan of
/// these terms covers it (USD per instance-hour of covered usage, the `rate` of AWS's
/// `describe-savings-plans-offering-rates`). Linux, shared tenancy, like every other catalog price.
struct SavingsPlanRate {
  std::string provider;  // "aws"
  SavingsPlanType type = SavingsPlanType::compute;
  ReservationTerm term = ReservationTerm::one_year;
  UpfrontPayment payment = UpfrontPayment::no_upfront;
  std::string region;
  std::string instance_type;
  Money hourly;
  Instant valid_from;  // the date the rate holds from
  friend bool operator==(const SavingsPlanRate&, const SavingsPlanRate&) = default;
};

/// A whole catalog as plain data: what importers produce, what the built-in catalog is, and what
/// an InMemoryPriceSource serves. Value type.
struct PriceCatalog {
  std::vector<InstanceType> instance_types;
  std::vector<Offer> offers;  // on-demand and reserved (spot prices live in spot_prices)
  std::vector<SpotPricePoint> spot_prices;
  std::vector<SpotRisk> spot_risks;
  std::vector<BillingRule> billing_rules;
  std::vector<SavingsPlanRate> savings_plan_rates;  // imported only; the built-in catalog has none
};

/// What to select. Empty strings and vectors, and nullopt, mean "any".
/// A GPU requirement matches instance types of that model with at least that many GPUs (whole
/// GPUs) and at least that much GPU memory in total.
struct OfferQuery {
  std::string provider;
  std::vector<std::string> regions;
  std::string instance_type;
  std::optional<PurchaseOption> option;
  std::string gpu_model;     // canonical name, exact ("A100" does not match "A100-80GB")
  int min_gpu_count = 0;
  double min_gpu_memory_gib = 0;
  /// Offers valid at this instant (the latest price with valid_from <= at); nullopt: the latest.
  std::optional<Instant> at;

  /// The offers of one instance type in one region under `option` (the pool's zone is not used).
  static OfferQuery for_pool(const PoolKey& pool, PurchaseOption option) {
    OfferQuery query;
    query.provider = pool.provider;
    query.regions = {pool.region};
    query.instance_type = pool.instance_type;
    query.option = option;
    return query;
  }
};

/// An offer together with its instance type, as offer queries return it.
struct OfferRow {
  Offer offer;
  InstanceType instance_type;
  friend bool operator==(const OfferRow&, const OfferRow&) = default;
};

/// The filters of `fleetcast pricing list` (and GET /v1/offers of `fleetcast serve`) as a user
/// gives them, as text: an empty string or vector, or 0, means any.
struct OfferFilters {
  std::string provider;
  std::string gpu_model;             // canonical name, e.g. "H100"
  std::vector<std::string> regions;
  std::string option;                // "on_demand", "reserved" or "spot"
  int min_gpu_count = 0;
};

/// The query the filters select. invalid_argument when `option` is not a purchase option's name
/// (the message says what was expected; the caller names the field).
Result<OfferQuery> offer_query(const OfferFilters& filters);

/// The rows as a JSON array, one object per offer: provider, instance_type, region, zone, option,
/// term, class, payment (null where they do not apply), hourly_usd, upfront_usd,
/// hourly_is_effective, effective_hourly_usd, valid_from, gpu_model, gpu_count, gpu_memory_gib,
/// vcpus, memory_gib. What `fleetcast pricing list --json` prints.
std::string offers_json(std::span<const OfferRow> rows);

/// The hourly cost of an offer with any upfront payment spread evenly over the term's hours
/// (rounded to the nearest micro-USD, halves away from zero).
Money effective_hourly_cost(const Offer& offer);

/// The utilisation above which a reservation costs less than paying on-demand for the same hours:
/// effective reserved rate / on-demand rate. 0.63 means the reservation pays off if the instance
/// would otherwise run more than 63% of the term. invalid_argument if `on_demand` is not an
/// on-demand offer with a positive price or `reservation` is not a reserved offer.
Result<double> break_even_utilisation(const Offer& reservation, const Offer& on_demand);

/// The source of prices the planner, the simulator and the scenario validator read.
///
/// Thread-safety: implementations are safe for concurrent calls of const methods from many
/// threads (each simulation reads prices while others do).
class PriceSource {
 public:
  virtual ~PriceSource() = default;

  /// All instance types a provider sells in this catalog, sorted by name.
  [[nodiscard]] virtual Result<std::vector<InstanceType>> instance_types(std::string_view provider) const = 0;
  /// One instance type, or nullopt when the catalog does not know it.
  [[nodiscard]] virtual Result<std::optional<InstanceType>> find_instance_type(
      std::string_view provider, std::string_view name) const = 0;
  /// The regions the catalog has offers in for a provider, sorted.
  [[nodiscard]] virtual Result<std::vector<std::string>> regions(std::string_view provider) const = 0;

  /// The offers that match, sorted by (provider, region, zone, instance type, option, terms).
  /// Spot offers carry the spot price in effect at `query.at` (or the latest one).
  [[nodiscard]] virtual Result<std::vector<OfferRow>> offers(const OfferQuery& query) const = 0;
  /// The spot price of a pool in effect at `at` (the latest point at or before it), or nullopt
  /// when the pool has no price that early.
  [[nodiscard]] virtual Result<std::optional<Money>> spot_price(const PoolKey& pool, Instant at) const = 0;
  /// A spot pool's whole price history, in time order.
  [[nodiscard]] virtual Result<std::vector<SpotPricePoint>> spot_price_history(const PoolKey& pool) const = 0;
  /// The latest risk figures of a spot pool, or nullopt when the catalog has none.
  [[nodiscard]] virtual Result<std::optional<SpotRisk>> spot_risk(const PoolKey& pool) const = 0;
  /// A provider's billing rule; not_found when the catalog does not know the provider.
  [[nodiscard]] virtual Result<BillingRule> billing_rule(std::string_view provider) const = 0;
  /// The provider's imported Savings Plan rates (the latest per type, term, payment, region and
  /// instance type), sorted by those keys; empty when none were imported (callers then estimate
  /// them from reserved rates, see engine/fleet_model.h).
  [[nodiscard]] virtual Result<std::vector<SavingsPlanRate>> savings_plan_rates(std::string_view provider) const = 0;
};

/// A PriceSource over a PriceCatalog held in memory, for tests and embedders.
///
/// Thread-safety: immutable after construction; all methods may be called concurrently.
class InMemoryPriceSource final : public PriceSource {
 public:
  /// Takes the catalog as it is; duplicates are the caller's business (the first one wins).
  explicit InMemoryPriceSource(PriceCatalog catalog);

  [[nodiscard]] Result<std::vector<InstanceType>> instance_types(std::string_view provider) const override;
  [[nodiscard]] Result<std::optional<InstanceType>> find_instance_type(
      std::string_view provider, std::string_view name) const override;
  [[nodiscard]] Result<std::vector<std::string>> regions(std::string_view provider) const override;
  [[nodiscard]] Result<std::vector<OfferRow>> offers(const OfferQuery& query) const override;
  [[nodiscard]] Result<std::optional<Money>> spot_price(const PoolKey& pool, Instant at) const override;
  [[nodiscard]] Result<std::vector<SpotPricePoint>> spot_price_history(const PoolKey& pool) const override;
  [[nodiscard]] Result<std::optional<SpotRisk>> spot_risk(const PoolKey& pool) const override;
  [[nodiscard]] Result<BillingRule> billing_rule(std::string_view provider) const override;
  [[nodiscard]] Result<std::vector<SavingsPlanRate>> savings_plan_rates(std::string_view provider) const override;

 private:
  PriceCatalog catalog_;
};

/// The built-in default catalog: public list prices of common GPU instance types on AWS, GCP and
/// Azure, written by the project, with the date they were valid (see pricing/builtin_catalog.cpp).
PriceCatalog builtin_price_catalog();

/// The built-in default catalog, in memory: the public list prices that ship with fleetcast.
std::unique_ptr<PriceSource> make_builtin_price_source();

// ---- the SQLite price database ----

/// The file formats `PriceDatabase::import_file` reads.
enum class ImportFormat {
  ec2instances,      // ec2instances.info instances.json (Linux prices)
  skypilot,          // SkyPilot catalog vms.csv (columns mapped by header)
  aws_spot_history,  // `aws ec2 describe-spot-price-history` JSON output
  fleetcast_csv,     // fleetcast's own plain CSV (see README "Pricing")
  aws_savings_plans_rates,  // `aws savingsplans describe-savings-plans-offering-rates` JSON output
};
/// "ec2instances", "skypilot", "aws-spot-history", "fleetcast-csv", "aws-savings-plans-rates".
std::string_view import_format_name(ImportFormat format) noexcept;
std::optional<ImportFormat> parse_import_format(std::string_view name) noexcept;
std::vector<std::string> import_format_names();

struct ImportOptions {
  /// The cloud, for formats that do not say it themselves (skypilot, and fleetcast-csv files
  /// without a provider column); ec2instances, aws-spot-history and aws-savings-plans-rates are always
  /// "aws".
  std::string provider = "aws";
  /// The date the file's prices hold from, for formats whose rows carry none (all but
  /// aws-spot-history, and fleetcast-csv rows with a valid_from). nullopt: a YYYY-MM-DD date in
  /// the file name, else the start of the current UTC day.
  std::optional<Instant> valid_from;
  /// Called inside the import transaction after each row written (the count so far); lets a
  /// caller show progress. Whatever it does, the import stays atomic.
  std::function<void(std::int64_t rows_written)> on_row;
};

/// Parses a price file into a catalog without touching any database. Errors (invalid_argument,
/// not_found, ...) name the file and the line, JSON pointer or field, and what was expected.
Result<PriceCatalog> parse_price_file(ImportFormat format, const std::filesystem::path& file,
                                      const ImportOptions& options = {});

struct ImportSummary {
  std::string source;     // the file as given
  std::string file_hash;  // "fnv1a64:<16 hex digits>" of the file's bytes, followed by the import
                          // options that differ from the defaults (see import_file)
  std::int64_t rows = 0;  // rows written (0 when already imported)
  bool already_imported = false;  // the same bytes were imported before with the same options: nothing changed
};

/// The default location of the pricing database, from the environment's values (empty = unset):
/// $FLEETCAST_PRICING_DB, else $XDG_DATA_HOME/fleetcast/pricing.db, else
/// $HOME/.local/share/fleetcast/pricing.db. failed_precondition when all three are unset.
Result<std::filesystem::path> default_price_database_path(std::string_view fleetcast_pricing_db,
                                                          std::string_view xdg_data_home,
                                                          std::string_view home);

/// The SQLite price catalog (WAL mode, so many readers and one importer can work at once).
///
/// A database is created on first use, filled with the built-in catalog; an older schema is
/// upgraded in place (PRAGMA user_version), a newer one refused. Imports are atomic (one
/// transaction) and idempotent (the same file twice changes nothing).
///
/// Thread-safety: one connection per object, serialised by an internal mutex, so all methods may
/// be called from many threads; for parallel reads, open one read-only object per thread.
class PriceDatabase final : public PriceSource {
 public:
  enum class Mode {
    read_only,   // never writes; the file must exist (simulations use this)
    read_write,  // creates the file and its directory if missing, migrates an older schema
  };
  struct Options {
    Mode mode = Mode::read_write;
    /// How long a call waits for another connection's write lock before failing (unavailable).
    std::chrono::milliseconds busy_timeout{5000};
    /// Fill a newly created database with builtin_price_catalog().
    bool seed_builtin_catalog = true;
    /// Create the missing folders above a new database file (read_write only): for a default
    /// location such as ~/.local/share/fleetcast; a path someone typed whose folder is missing is
    /// more likely a typo, refused (not_found) when false.
    bool create_folders = false;
    /// Where the database's writes go (the file-system seam fault-injection tests use); it must outlive
    /// the object. nullptr: the real disk through SQLite's own VFS.
    FileSystem* file_system = nullptr;
  };

  /// The schema version this build writes and reads.
  static int schema_version() noexcept;

  static Result<std::unique_ptr<PriceDatabase>> open(const std::filesystem::path& file, Options options);
  static Result<std::unique_ptr<PriceDatabase>> open(const std::filesystem::path& file) {
    return open(file, Options{});
  }
  ~PriceDatabase() override;
  PriceDatabase(const PriceDatabase&) = delete;
  PriceDatabase& operator=(const PriceDatabase&) = delete;

  /// Parses `file` and writes it in one transaction; on any error nothing changes. A file already
  /// imported with the same options (provider, valid_from) is recognised and changes nothing.
  Result<ImportSummary> import_file(ImportFormat format, const std::filesystem::path& file,
                                    const ImportOptions& options = {});
  /// Writes a catalog in one transaction, logged under `source` and `file_hash`.
  Result<ImportSummary> import_catalog(const PriceCatalog& catalog, std::string_view format_name,
                                       std::string source, std::string file_hash,
                                       const ImportOptions& options = {});

  [[nodiscard]] Result<std::vector<InstanceType>> instance_types(std::string_view provider) const override;
  [[nodiscard]] Result<std::optional<InstanceType>> find_instance_type(
      std::string_view provider, std::string_view name) const override;
  [[nodiscard]] Result<std::vector<std::string>> regions(std::string_view provider) const override;
  [[nodiscard]] Result<std::vector<OfferRow>> offers(const OfferQuery& query) const override;
  [[nodiscard]] Result<std::optional<Money>> spot_price(const PoolKey& pool, Instant at) const override;
  [[nodiscard]] Result<std::vector<SpotPricePoint>> spot_price_history(const PoolKey& pool) const override;
  [[nodiscard]] Result<std::optional<SpotRisk>> spot_risk(const PoolKey& pool) const override;
  [[nodiscard]] Result<BillingRule> billing_rule(std::string_view provider) const override;
  [[nodiscard]] Result<std::vector<SavingsPlanRate>> savings_plan_rates(std::string_view provider) const override;

 private:
  struct Impl;
  explicit PriceDatabase(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace fleetcast
