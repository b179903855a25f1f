// `fleetcast pricing import|list|show`: fills and queries the pricing database.
//
// The database is --db PATH, else $FLEETCAST_PRICING_DB, else $XDG_DATA_HOME/fleetcast/pricing.db,
// else $HOME/.local/share/fleetcast/pricing.db; it is created from the built-in catalog on first
// use. Errors go to stderr; exit status 0 ok, 1 the database failed, 2 invalid input.
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>


#include "core/text.h"
#include "fleetcast/pricing.h"
#include "tools/cli/commands.h"

namespace fleetcast::cli {
namespace {

std::string env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? std::string{} : std::string(value);
}

int report(const Status& status) {
  std::cerr << "fleetcast pricing: " << status.message() << '\n';
  return exit_code_for(status);
}

// Opens the database for writing (creating or upgrading it); a write-protected file is still
// readable, so queries fall back to a read-only connection.
Result<std::unique_ptr<PriceDatabase>> open_database(const std::string& db_option, bool writing,
                                                     FileSystem* files = nullptr) {
  Result<std::filesystem::path> path =
      db_option.empty() ? default_price_database_path(env("FLEETCAST_PRICING_DB"), env("XDG_DATA_HOME"), env("HOME"))
                        : Result<std::filesystem::path>(std::filesystem::path(db_option));
  if (!path.ok()) return path.status();
  PriceDatabase::Options read_write;
  read_write.file_system = files;
  read_write.create_folders = db_option.empty();  // the default location's folders, never a typed path's
  Result<std::unique_ptr<PriceDatabase>> db = PriceDatabase::open(*path, read_write);
  if (!writing && !db.ok() && db.status().code() == StatusCode::permission_denied) {
    PriceDatabase::Options options;
    options.mode = PriceDatabase::Mode::read_only;
    return PriceDatabase::open(*path, options);
  }
  return db;
}

// "55.04", "0.39388", "12.00": at least two decimals, at most the six Money holds.
std::string display_usd(Money amount) {
  std::string text = format_usd(amount);
  while (text.size() > 3 && text.back() == '0' && text[text.size() - 3] != '.') text.pop_back();
  return text;
}

std::string term_of(const ReservationTerms& terms) { return std::string(reservation_term_name(terms.term)); }
std::string class_of(const ReservationTerms& terms) {
  return std::string(reservation_class_name(terms.reservation_class));
}
std::string payment_of(const ReservationTerms& terms) { return std::string(upfront_payment_name(terms.payment)); }

std::string gpu_text(const InstanceType& type) {
  if (type.gpu_model.empty()) return "-";
  std::ostringstream out;
  if (type.gpu_fraction > 0) {
    out << type.gpu_fraction;
  } else {
    out << type.gpu_count;
  }
  out << "x " << type.gpu_model;
  return out.str();
}

// A plain text table, columns padded to their widest cell.
void print_table(std::ostream& out, const std::vector<OfferRow>& rows) {
  std::vector<std::vector<std::string>> cells{
      {"PROVIDER", "REGION", "ZONE", "INSTANCE TYPE", "GPUS", "OPTION", "TERM", "PAYMENT", "USD/H", "UPFRONT",
       "EFFECTIVE/H"}};
  for (const OfferRow& row : rows) {
    const Offer& offer = row.offer;
    cells.push_back({offer.pool.provider, offer.pool.region, offer.pool.zone.empty() ? "-" : offer.pool.zone,
                     offer.pool.instance_type, gpu_text(row.instance_type),
                     std::string(purchase_option_name(offer.pool.option)),
                     offer.reservation ? term_of(*offer.reservation) + " " + class_of(*offer.reservation) : "-",
                     offer.reservation ? payment_of(*offer.reservation) : "-",
                     offer.hourly_is_effective ? "-" : display_usd(offer.hourly),
                     offer.reservation && !offer.hourly_is_effective ? display_usd(offer.upfront) : "-",
                     display_usd(effective_hourly_cost(offer))});
  }
  std::vector<std::size_t> widths(cells.front().size(), 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < line.size(); ++i) widths[i] = std::max(widths[i], line[i].size());
  }
  for (const auto& line : cells) {
    for (std::size_t i = 0; i + 1 < line.size(); ++i) {
      out << std::left << std::setw(static_cast<int>(widths[i] + 2)) << line[i];
    }
    out << line.back() << '\n';
  }
}

struct ImportArguments {
  FileSystem* file_system = nullptr;  // where the database's writes go
  std::string db;
  std::string format;
  std::string file;
  std::string provider = "aws";
  std::string valid_from;
};

struct ShowOptions {
  std::string db;
  std::string instance_type;
  bool json = false;
};

struct ListOptions {
  std::string db;
  OfferFilters filters;
  bool json = false;
};

int run_list(const ListOptions& options) {
  Result<OfferQuery> query = offer_query(options.filters);
  if (!query.ok()) return report(query.status().with_context("--option"));
  Result<std::unique_ptr<PriceDatabase>> db = open_database(options.db, false);
  if (!db.ok()) return report(db.status());
  Result<std::vector<OfferRow>> rows = (*db)->offers(*query);
  if (!rows.ok()) return report(rows.status());
  if (options.json) {
    std::cout << offers_json(*rows);
  } else if (rows->empty()) {
    std::cout << "no offers match\n";
  } else {
    print_table(std::cout, *rows);
  }
  return kExitOk;
}

// The import formats as the help and the error for an unknown one list them: "a, b, c".
std::string known_import_formats() {
  std::string known;
  for (const std::string& name : import_format_names()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

int run_import(const ImportArguments& args) {
  const std::string& format_name = args.format;
  const std::string& valid_from = args.valid_from;
  const std::optional<ImportFormat> format = parse_import_format(format_name);
  if (!format) {
    const std::vector<std::string> names = import_format_names();
    return report(invalid_argument_error("unknown import format '" + format_name + "'" +
                                         text::did_you_mean(format_name, names) + "; known formats: " +
                                         known_import_formats()));
  }
  ImportOptions options;
  options.provider = args.provider;
  if (!valid_from.empty()) {
    Result<Instant> instant =
        parse_instant(valid_from.size() == 10 ? valid_from + "T00:00:00Z" : valid_from);
    if (!instant.ok()) return report(instant.status().with_context("--valid-from"));
    options.valid_from = *instant;
  }
  Result<std::unique_ptr<PriceDatabase>> db = open_database(args.db, true, args.file_system);
  if (!db.ok()) return report(db.status());
  Result<ImportSummary> summary = (*db)->import_file(*format, args.file, options);
  if (!summary.ok()) return report(summary.status());
  if (summary->already_imported) {
    std::cout << args.file << ": already imported (" << summary->file_hash << "), nothing changed\n";
  } else {
    std::cout << args.file << ": imported " << summary->rows << " rows (" << summary->file_hash << ")\n";
  }
  return kExitOk;
}

int run_show(const ShowOptions& options) {
  const std::string& instance_type = options.instance_type;
  Result<std::unique_ptr<PriceDatabase>> db = open_database(options.db, false);
  if (!db.ok()) return report(db.status());
  OfferQuery query;
  query.instance_type = instance_type;
  Result<std::vector<OfferRow>> rows = (*db)->offers(query);
  if (!rows.ok()) return report(rows.status());
  if (rows->empty()) {
    std::vector<std::string> names;
    for (const char* provider : {"aws", "gcp", "azure"}) {
      Result<std::vector<InstanceType>> types = (*db)->instance_types(provider);
      if (!types.ok()) return report(types.status());
      for (const InstanceType& type : *types) names.push_back(type.name);
    }
    return report(not_found_error("no offers for instance type '" + instance_type + "'" +
                                  text::did_you_mean(instance_type, names)));
  }
  if (options.json) {
    std::cout << offers_json(*rows);
    return kExitOk;
  }
  std::set<std::pair<std::string, std::string>> described;
  for (const OfferRow& row : *rows) {
    const InstanceType& type = row.instance_type;
    if (!described.insert({type.provider, type.name}).second) continue;
    std::cout << type.provider << " " << type.name << ": " << type.vcpus << " vCPUs, " << type.memory_gib
              << " GiB memory, GPUs " << gpu_text(type) << " (" << type.gpu_memory_gib << " GiB GPU memory)\n";
  }
  std::cout << '\n';
  print_table(std::cout, *rows);
  return kExitOk;
}

void add_db_option(CLI::App& command, std::string& db) {
  command.add_option("--db", db,
                     "Pricing database (default: $FLEETCAST_PRICING_DB, $XDG_DATA_HOME/fleetcast/pricing.db or "
                     "~/.local/share/fleetcast/pricing.db; created from the built-in catalog on first use)");
}

}  // namespace

void add_pricing_command(CLI::App& app, int& exit_code, FileSystem* files) {
  auto* pricing = app.add_subcommand("pricing", "Fill and query the GPU pricing database");
  pricing->require_subcommand(1);
  pricing->footer("Exit status: 0 success, 1 the database failed (locked, I/O), 2 invalid input (a --db that is not a price database too).");

  auto import_args = std::make_shared<ImportArguments>();
  import_args->file_system = files;
  auto* import = pricing->add_subcommand("import", "Import a price file in one transaction (all or nothing)");
  import->add_option("FORMAT", import_args->format, known_import_formats())
      ->required();
  import->add_option("FILE", import_args->file, "The file to import")->required();
  add_db_option(*import, import_args->db);
  import->add_option("--provider", import_args->provider, "Cloud of a skypilot or fleetcast-csv file (default aws)");
  import->add_option("--valid-from", import_args->valid_from,
                     "Date the prices hold from, 2025-11-30 or RFC 3339 (default: a date in the file name, else today)");
  import->callback([import_args, &exit_code] { exit_code = run_import(*import_args); });

  auto list_options = std::make_shared<ListOptions>();
  auto* list = pricing->add_subcommand("list", "List offers as a table, or as JSON with --json");
  add_db_option(*list, list_options->db);
  list->add_option("--gpu", list_options->filters.gpu_model, "GPU model, e.g. H100, A100, A100-80GB, L4");
  list->add_option("--region", list_options->filters.regions, "Region (repeatable)");
  list->add_option("--option", list_options->filters.option, "on_demand, reserved or spot");
  list->add_option("--provider", list_options->filters.provider, "aws, gcp, azure, ...");
  list->add_option("--min-gpus", list_options->filters.min_gpu_count, "At least this many GPUs per instance")
      ->check(CLI::NonNegativeNumber);
  list->add_flag("--json", list_options->json, "Print a JSON array of offers");
  list->callback([list_options, &exit_code] { exit_code = run_list(*list_options); });

  auto show_options = std::make_shared<ShowOptions>();
  auto* show = pricing->add_subcommand("show", "Describe an instance type and list all its offers");
  show->add_option("INSTANCE_TYPE", show_options->instance_type, "e.g. p5.48xlarge")
      ->required()
      ->check([](const std::string& name) { return name.empty() ? std::string("expected an instance type, found an empty name") : std::string(); });
  add_db_option(*show, show_options->db);
  show->add_flag("--json", show_options->json, "Print a JSON array of offers");
  show->callback([show_options, &exit_code] { exit_code = run_show(*show_options); });
}

}  // namespace fleetcast::cli
