// parse_price_file and the format dispatch shared with PriceDatabase::import_file.
#include <chrono>

#include <nlohmann/json.hpp>

#include "core/csv.h"
#include "core/json_text.h"
#include "core/hash.h"
#include "pricing/catalog_builder.h"
#include "pricing/importers.h"

namespace fleetcast {
namespace pricing {

Result<PriceCatalog> parse_price_text(ImportFormat format, std::string_view text, const std::filesystem::path& file,
                                      const ImportOptions& options) {
  const std::string source = file.string();
  const Instant valid_from = options.valid_from.value_or(default_valid_from(
      file.filename().string(), std::chrono::time_point_cast<Seconds>(std::chrono::system_clock::now())));
  try {
    switch (format) {
      case ImportFormat::ec2instances:
        return parse_ec2instances(text, source, valid_from);
      case ImportFormat::skypilot:
        return parse_skypilot_csv(text, source, options.provider, valid_from);
      case ImportFormat::aws_spot_history:
        return parse_aws_spot_history(text, source);
      case ImportFormat::fleetcast_csv:
        return parse_fleetcast_csv(text, source, options.provider, valid_from);
      case ImportFormat::aws_savings_plans_rates:
        return parse_aws_savings_plans_rates(text, source, valid_from);
    }
  } catch (const nlohmann::json::exception& error) {
    // The importers check every type before they read; this stops what they did not foresee at
    // the edge of the module.
    return invalid_argument_error(source + ": " + json_text::describe_exception(error) + "; expected the " +
                                  std::string(import_format_name(format)) + " format");
  }
  return invalid_argument_error(source + ": unknown import format");
}

std::string file_hash(std::string_view bytes) { return fnv1a64_label(Fnv1a64().add(bytes).value()); }

}  // namespace pricing

Result<PriceCatalog> parse_price_file(ImportFormat format, const std::filesystem::path& file,
                                      const ImportOptions& options) {
  Result<std::string> text = csv::read_text_file(file);
  if (!text.ok()) return text.status();
  return pricing::parse_price_text(format, *text, file, options);
}

}  // namespace fleetcast
