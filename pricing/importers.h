// The parsers of the import formats, on text already read (so the importer reads a file once,
// hashes it and parses it), each producing a PriceCatalog through a CatalogBuilder. Errors name
// `source` and the line (CSV) or JSON pointer (JSON) and the field.
//
// Thread-safety: pure functions.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "fleetcast/pricing.h"

namespace fleetcast::pricing {

/// ec2instances.info instances.json: Linux on-demand, reserved (effective rates), regional
/// average spot price and the Spot Advisor figures of every region.
Result<PriceCatalog> parse_ec2instances(std::string_view text, const std::string& source, Instant valid_from);

/// `aws ec2 describe-spot-price-history` output: one spot price point per row (Linux/UNIX rows
/// only; other product descriptions are skipped).
Result<PriceCatalog> parse_aws_spot_history(std::string_view text, const std::string& source);

/// `aws savingsplans describe-savings-plans-offering-rates` output (one page): the rates of
/// Compute and EC2 Instance Savings Plans for EC2 Linux/UNIX shared-tenancy instance-hours in USD;
/// other rows are skipped. A duration other than 1 or 3 years is an error.
Result<PriceCatalog> parse_aws_savings_plans_rates(std::string_view text, const std::string& source,
                                                   Instant valid_from);

/// SkyPilot vms.csv for `provider`, columns mapped by header.
Result<PriceCatalog> parse_skypilot_csv(std::string_view text, const std::string& source,
                                        const std::string& provider, Instant valid_from);

/// fleetcast's own CSV (see README "Pricing"), columns mapped by header.
Result<PriceCatalog> parse_fleetcast_csv(std::string_view text, const std::string& source,
                                         const std::string& provider, Instant valid_from);

/// Parses a file's text in `format`; `file` names it in messages and gives the default
/// valid-from date (see ImportOptions::valid_from).
Result<PriceCatalog> parse_price_text(ImportFormat format, std::string_view text, const std::filesystem::path& file,
                                      const ImportOptions& options);

/// "fnv1a64:<16 hex digits>" of the bytes: identifies a file in the import log.
std::string file_hash(std::string_view bytes);

}  // namespace fleetcast::pricing
