// The CSV import formats: SkyPilot's vms.csv and fleetcast's own plain CSV. Both map columns by
// header name, so column order does not matter and optional columns may be absent; every error
// names the file, the line and the column.
#include <algorithm>
#include <cmath>
#include <map>
#include <cctype>
#include <span>
#include <string>
#include <vector>

#include "core/csv.h"
#include "core/text.h"
#include "pricing/catalog_builder.h"
#include "pricing/importers.h"

namespace fleetcast::pricing {
namespace {

// Cell access by column name over a CsvTable whose header was checked against a format's
// required and optional columns. Thread-safety: a read-only view; the table must outlive it.
class CsvColumns {
 public:
  enum class UnknownColumns { refused, ignored };

  static Result<CsvColumns> map(const csv::CsvTable& table, std::span<const std::string> required,
                                std::span<const std::string> optional, UnknownColumns unknown) {
    CsvColumns columns(table);
    std::vector<std::string> known(required.begin(), required.end());
    known.insert(known.end(), optional.begin(), optional.end());
    for (std::size_t i = 0; i < table.header.size(); ++i) {
      const std::string name(text::trim(table.header[i]));
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        if (unknown == UnknownColumns::ignored) continue;
        return invalid_argument_error(table.source + ":" + std::to_string(table.header_line) + ": unknown column '" +
                                      name + "'" + text::did_you_mean(name, known));
      }
      // Two cells for one field: which one the file meant cannot be known.
      if (!columns.index_.emplace(name, i).second) {
        return invalid_argument_error(table.source + ":" + std::to_string(table.header_line) + ": column '" + name +
                                      "' appears twice");
      }
    }
    for (const std::string& name : required) {
      if (!columns.index_.contains(name)) {
        return invalid_argument_error(table.source + ":" + std::to_string(table.header_line) +
                                      ": missing required column '" + name + "'");
      }
    }
    return columns;
  }

  /// The trimmed cell, or "" when the column is absent.
  [[nodiscard]] std::string_view text(std::size_t row, const std::string& column) const {
    const auto it = index_.find(column);
    return it == index_.end() ? std::string_view{} : text::trim(table_->rows[row][it->second]);
  }

  /// "file:line: column 'X'", for messages.
  [[nodiscard]] std::string where(std::size_t row, const std::string& column) const {
    return table_->where(row) + ": column '" + column + "'";
  }

  /// "file:line: column 'X': expected E, got 'cell'".
  [[nodiscard]] Status invalid(std::size_t row, const std::string& column, const std::string& expected) const {
    return invalid_argument_error(where(row, column) + ": expected " + expected + ", got '" + std::string(text(row, column)) +
                                  "'");
  }

  /// The cell as a number; nullopt when empty or absent.
  [[nodiscard]] Result<std::optional<double>> number(std::size_t row, const std::string& column) const {
    const std::string_view cell = text(row, column);
    if (cell.empty()) return std::optional<double>{};
    const std::optional<double> value = text::parse_double(cell);
    if (!value || *value < 0) {
      return invalid_argument_error(where(row, column) + ": expected a non-negative number, got '" +
                                    std::string(cell) + "'");
    }
    return value;
  }

  /// The cell as a price; nullopt when empty or absent.
  [[nodiscard]] Result<std::optional<Money>> price(std::size_t row, const std::string& column) const {
    const std::string_view cell = text(row, column);
    if (cell.empty()) return std::optional<Money>{};
    Result<Money> value = parse_price(cell, table_->where(row), column);
    if (!value.ok()) return value.status();
    return std::optional<Money>{*value};
  }

 private:
  explicit CsvColumns(const csv::CsvTable& table) : table_(&table) {}
  const csv::CsvTable* table_;
  std::map<std::string, std::size_t, std::less<>> index_;
};

// Reads the instance-type columns shared by both formats (names differ, so they are passed in).
struct InstanceTypeColumns {
  std::string vcpus, memory_gib, gpu_model, gpu_count, gpu_memory_gib;
};

Result<InstanceType> read_instance_type(const CsvColumns& columns, std::size_t row, const InstanceTypeColumns& names,
                                        std::string provider, std::string name) {
  InstanceType type;
  type.provider = std::move(provider);
  type.name = std::move(name);
  Result<std::optional<double>> vcpus = columns.number(row, names.vcpus);
  Result<std::optional<double>> memory = columns.number(row, names.memory_gib);
  Result<std::optional<double>> gpus = columns.number(row, names.gpu_count);
  Result<std::optional<double>> gpu_memory =
      names.gpu_memory_gib.empty() ? Result<std::optional<double>>{std::nullopt}
                                   : columns.number(row, names.gpu_memory_gib);
  for (const Status& status : {vcpus.status(), memory.status(), gpus.status(), gpu_memory.status()}) {
    if (!status.ok()) return status;
  }
  Result<int> vcpu_count = parse_count(vcpus->value_or(0), columns.where(row, names.vcpus));
  if (!vcpu_count.ok()) return vcpu_count.status();
  type.vcpus = *vcpu_count;
  type.memory_gib = memory->value_or(0);
  type.gpu_model = std::string(columns.text(row, names.gpu_model));
  type.gpu_memory_gib = gpu_memory->value_or(0);
  if (Status status = set_gpu_count(type, gpus->value_or(0), columns.where(row, names.gpu_count)); !status.ok()) {
    return status;
  }
  return type;
}

/// The number after `key` in a Python-style dict: the key (case-insensitive), an optional closing
/// quote, spaces, ':', spaces, then digits and dots. Searched by hand, as the field is user text of
/// any length and std::regex recurses per character.
std::optional<double> number_after_key(std::string_view text, std::string_view key) {
  const auto same_letter = [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
  };
  const auto is_space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  for (auto found = std::search(text.begin(), text.end(), key.begin(), key.end(), same_letter); found != text.end();
       found = std::search(found + 1, text.end(), key.begin(), key.end(), same_letter)) {
    std::size_t pos = static_cast<std::size_t>(found - text.begin()) + key.size();
    if (pos < text.size() && (text[pos] == '\'' || text[pos] == '"')) ++pos;
    while (pos < text.size() && is_space(text[pos])) ++pos;
    if (pos >= text.size() || text[pos] != ':') continue;
    ++pos;
    while (pos < text.size() && is_space(text[pos])) ++pos;
    const std::size_t start = pos;
    while (pos < text.size() && (std::isdigit(static_cast<unsigned char>(text[pos])) != 0 || text[pos] == '.')) ++pos;
    if (pos > start) return text::parse_double(text.substr(start, pos - start));
  }
  return std::nullopt;
}

// SkyPilot's GpuInfo is a Python-style dict; its total GPU memory is "'TotalGpuMemoryInMiB': N"
// (some catalogs spell the keys in lower case, some give only each GPU's 'SizeInMiB').
std::optional<double> gpu_memory_gib(std::string_view gpu_info, double gpu_count) {
  if (const auto total = number_after_key(gpu_info, "TotalGpuMemoryInMiB")) return *total / 1024;
  if (const auto each = number_after_key(gpu_info, "SizeInMiB")) return *each * gpu_count / 1024;
  return std::nullopt;
}

}  // namespace

Result<PriceCatalog> parse_skypilot_csv(std::string_view text, const std::string& source, const std::string& provider,
                                        Instant valid_from) {
  Result<csv::CsvTable> table = csv::parse(text, source);
  if (!table.ok()) return table.status();
  static const std::vector<std::string> kRequired{"InstanceType", "Region"};
  static const std::vector<std::string> kOptional{"vCPUs", "MemoryGiB", "AcceleratorName", "AcceleratorCount",
                                                  "GpuInfo", "AvailabilityZone", "Price", "SpotPrice"};
  // SkyPilot's catalogs add columns of their own per cloud (Azure's Generation, ...): ignored.
  Result<CsvColumns> columns = CsvColumns::map(*table, kRequired, kOptional, CsvColumns::UnknownColumns::ignored);
  if (!columns.ok()) return columns.status();
  const InstanceTypeColumns names{"vCPUs", "MemoryGiB", "AcceleratorName", "AcceleratorCount", ""};
  CatalogBuilder builder;
  for (std::size_t row = 0; row < table->rows.size(); ++row) {
    const std::string name(columns->text(row, "InstanceType"));
    // GCP's catalog prices attachable GPUs on rows of their own, without a machine type; a pool
    // needs a machine, so those rows are not imported.
    if (name.empty()) continue;
    Result<InstanceType> type = read_instance_type(*columns, row, names, provider, name);
    if (!type.ok()) return type.status();
    const double gpus = type->gpu_count > 0 ? type->gpu_count : type->gpu_fraction;
    if (const auto memory = gpu_memory_gib(columns->text(row, "GpuInfo"), gpus)) type->gpu_memory_gib = *memory;
    if (Status status = builder.add_instance_type(*type, table->where(row)); !status.ok()) return status;

    Result<std::optional<Money>> on_demand = columns->price(row, "Price");
    Result<std::optional<Money>> spot = columns->price(row, "SpotPrice");
    for (const Status& status : {on_demand.status(), spot.status()}) {
      if (!status.ok()) return status;
    }
    const std::string region(columns->text(row, "Region"));
    if (region.empty()) return invalid_argument_error(columns->where(row, "Region") + ": empty region");
    // On-demand prices hold for the whole region (the catalog repeats them per zone); spot prices
    // differ per zone.
    if (*on_demand) {
      Offer offer;
      offer.pool = PoolKey{provider, region, "", name, PurchaseOption::on_demand};
      offer.hourly = **on_demand;
      offer.valid_from = valid_from;
      if (Status status = builder.add_offer(offer, table->where(row)); !status.ok()) return status;
    }
    if (*spot) {
      PoolKey pool{provider, region, std::string(columns->text(row, "AvailabilityZone")), name, PurchaseOption::spot};
      if (Status status = builder.add_spot_price(SpotPricePoint{std::move(pool), valid_from, **spot}, table->where(row));
          !status.ok()) {
        return status;
      }
    }
  }
  return std::move(builder).take();
}

namespace {

// A row's pool, validity and prices in fleetcast's CSV format; the option's own columns are read apart.
Result<Offer> read_fleetcast_offer(const CsvColumns& columns, std::size_t row, const std::string& provider,
                                   Instant valid_from) {
  Offer offer;
  offer.pool.provider = columns.text(row, "provider").empty() ? provider : std::string(columns.text(row, "provider"));
  offer.pool.region = columns.text(row, "region");
  offer.pool.zone = columns.text(row, "zone");
  offer.pool.instance_type = columns.text(row, "instance_type");
  if (offer.pool.region.empty()) return columns.invalid(row, "region", "a region");
  if (offer.pool.instance_type.empty()) return columns.invalid(row, "instance_type", "an instance type");
  const std::optional<PurchaseOption> option = parse_purchase_option(columns.text(row, "option"));
  if (!option) return columns.invalid(row, "option", "on_demand, reserved or spot");
  offer.pool.option = *option;
  offer.valid_from = valid_from;
  if (const std::string_view date = columns.text(row, "valid_from"); !date.empty()) {
    Result<Instant> instant = parse_instant(date.size() == 10 ? std::string(date) + "T00:00:00Z" : std::string(date));
    if (!instant.ok()) return columns.invalid(row, "valid_from", "a date (2025-11-30) or an RFC 3339 instant");
    offer.valid_from = *instant;
  }
  Result<std::optional<Money>> hourly = columns.price(row, "hourly_usd");
  Result<std::optional<Money>> upfront = columns.price(row, "upfront_usd");
  for (const Status& status : {hourly.status(), upfront.status()}) {
    if (!status.ok()) return status;
  }
  if (!*hourly) return columns.invalid(row, "hourly_usd", "an hourly price in USD");
  offer.hourly = **hourly;
  offer.upfront = upfront->value_or(Money{});
  return offer;
}

// A reserved row's term, class, payment and whether its hourly rate is effective, into `offer`.
Status read_reservation_columns(const CsvColumns& columns, std::size_t row, Offer& offer) {
  ReservationTerms terms;
  const auto term = parse_reservation_term(columns.text(row, "term"));
  if (!term) return columns.invalid(row, "term", "1y or 3y");
  terms.term = *term;
  const std::string_view class_name = columns.text(row, "class");
  const auto reservation_class = parse_reservation_class(class_name.empty() ? "standard" : class_name);
  if (!reservation_class) return columns.invalid(row, "class", "standard or convertible");
  terms.reservation_class = *reservation_class;
  const auto payment = parse_upfront_payment(columns.text(row, "payment"));
  if (!payment) return columns.invalid(row, "payment", "no_upfront, partial_upfront or all_upfront");
  terms.payment = *payment;
  offer.reservation = terms;
  const std::string_view effective = columns.text(row, "effective");
  if (effective != "" && effective != "true" && effective != "false") return columns.invalid(row, "effective", "true or false");
  offer.hourly_is_effective = effective == "true";
  if (offer.hourly_is_effective && offer.upfront != Money{}) {
    return columns.invalid(row, "upfront_usd", "no upfront amount when the hourly rate is effective");
  }
  return {};
}

// A spot row's interruption bucket and savings, when it gives a bucket.
Result<std::optional<SpotRisk>> read_spot_risk(const CsvColumns& columns, std::size_t row, const Offer& offer) {
  const std::string_view bucket_name = columns.text(row, "interruption_bucket");
  if (bucket_name.empty()) return std::optional<SpotRisk>{};
  const auto bucket = parse_interruption_bucket(bucket_name);
  if (!bucket) return columns.invalid(row, "interruption_bucket", "one of <5%, 5-10%, 10-15%, 15-20%, >20%");
  SpotRisk risk{offer.pool, *bucket, std::nullopt, offer.valid_from};
  if (const std::string_view savings = columns.text(row, "savings_percent"); !savings.empty()) {
    const auto percent = text::parse_int64(savings);
    if (!percent || *percent < 0 || *percent > 100) return columns.invalid(row, "savings_percent", "an integer 0..100");
    risk.savings_percent = static_cast<int>(*percent);
  }
  return std::optional<SpotRisk>{std::move(risk)};
}

// One row of fleetcast's CSV format into the builder: its instance type when it describes one, then its offer.
Status add_fleetcast_row(const CsvColumns& columns, std::size_t row, const std::string& where, const std::string& provider,
                         Instant valid_from, CatalogBuilder& builder) {
  Result<Offer> offer = read_fleetcast_offer(columns, row, provider, valid_from);
  if (!offer.ok()) return offer.status();
  if (!columns.text(row, "vcpus").empty() || !columns.text(row, "gpu_model").empty()) {
    const InstanceTypeColumns names{"vcpus", "memory_gib", "gpu_model", "gpu_count", "gpu_memory_gib"};
    Result<InstanceType> type = read_instance_type(columns, row, names, offer->pool.provider, offer->pool.instance_type);
    if (!type.ok()) return type.status();
    if (Status status = builder.add_instance_type(*std::move(type), where); !status.ok()) return status;
  }
  switch (offer->pool.option) {
    case PurchaseOption::reserved:
      if (Status status = read_reservation_columns(columns, row, *offer); !status.ok()) return status;
      return builder.add_offer(*std::move(offer), where);
    case PurchaseOption::on_demand:
      return builder.add_offer(*std::move(offer), where);
    case PurchaseOption::spot: {
      Result<std::optional<SpotRisk>> risk = read_spot_risk(columns, row, *offer);
      if (!risk.ok()) return risk.status();
      if (*risk) {
        if (Status status = builder.add_spot_risk(**std::move(risk), where); !status.ok()) return status;
      }
      return builder.add_spot_price(SpotPricePoint{offer->pool, offer->valid_from, offer->hourly}, where);
    }
  }
  return {};
}

}  // namespace

Result<PriceCatalog> parse_fleetcast_csv(std::string_view text, const std::string& source, const std::string& provider,
                                         Instant valid_from) {
  Result<csv::CsvTable> table = csv::parse(text, source);
  if (!table.ok()) return table.status();
  static const std::vector<std::string> kRequired{"instance_type", "region", "option", "hourly_usd"};
  static const std::vector<std::string> kOptional{
      "provider", "zone",     "term",       "class",     "payment",        "upfront_usd",
      "effective", "valid_from", "vcpus",    "memory_gib", "gpu_model",     "gpu_count",
      "gpu_memory_gib", "interruption_bucket", "savings_percent"};
  Result<CsvColumns> columns = CsvColumns::map(*table, kRequired, kOptional, CsvColumns::UnknownColumns::refused);
  if (!columns.ok()) return columns.status();
  CatalogBuilder builder;
  for (std::size_t row = 0; row < table->rows.size(); ++row) {
    if (Status status = add_fleetcast_row(*columns, row, table->where(row), provider, valid_from, builder); !status.ok()) {
      return status;
    }
  }
  return std::move(builder).take();
}

}  // namespace fleetcast::pricing
