// The commitments a plan recommends, as the requests that buy them (add_commitment_purchases).
//
// Auto Scaling, CloudFormation and Kubernetes apply capacity; none of them buys a commitment, which
// someone with billing rights does with the AWS CLI. So every format that exports an AWS plan gets
// the same documents, written here beside its own: per commitment, a describe call that finds AWS's
// current offering of the plan's terms, then the call that buys it, holding a placeholder where the
// offering's id goes (an id cannot be known offline), and a section of README.txt with the
// commands in order and what the plan expected of each purchase.
//
// A kind of commitment is one function from the plan to a CommitmentKind (reservations now; Savings
// Plans, `aws savingsplans describe-savings-plans-offerings` then `create-savings-plan`, would be
// another): file names, numbering and the README section are written from CommitmentKinds alone.
//
// AWS references relied on, checked 2026-11-25 in the EC2 API Reference and botocore 1.43.11's ec2
// service model (its documentation strings):
//  - DescribeReservedInstancesOfferings: InstanceType, ProductDescription, InstanceTenancy,
//    OfferingClass, OfferingType, MinDuration/MaxDuration in seconds (31536000 | 94608000),
//    IncludeMarketplace, and the filter `scope` ("Availability Zone" or "Region"); no region field
//    (the endpoint's region is the offering's). "The order of the elements in the response ...
//    might vary": the request pins every term so that one offering answers it.
//  - PurchaseReservedInstancesOffering: InstanceCount and ReservedInstancesOfferingId required;
//    LimitPrice, a ReservedInstanceLimitPrice whose Amount is "the limit price on the total order
//    (instanceCount * price)" in USD (the only CurrencyCode). Both pages document LimitPrice "for
//    Reserved Instance Marketplace offerings"; whether AWS enforces it on its own offerings is not
//    documented, so README.txt asks for the offering's price to be checked before buying.
//  - EC2 User Guide, "Reserved Instance quotas": 20 new regional Reserved Instances per Region per
//    month by default, counted by InstanceCount.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "export/aws_documents.h"
#include "export/exporters.h"
#include "core/json_text.h"

namespace fleetcast::exporters {

namespace {

namespace fs = std::filesystem;

// One API call of a purchase.
struct PurchaseCall {
  std::string service;    // the AWS CLI's name: "ec2"
  std::string operation;  // the AWS CLI's name: "describe-reserved-instances-offerings"
  ordered_json request;   // its --cli-input-json document
};

// One commitment to buy: `calls` in order, the first finding the offering, the last buying it with
// `placeholder` where the offering's id goes, which `reply_field` of the first call's reply holds.
struct CommitmentPurchase {
  std::string name;    // in its folder's name: "p5.48xlarge-us-east-1"
  std::string region;  // every call's --region
  std::string title;
  std::vector<PurchaseCall> calls;
  std::string_view placeholder;
  std::string_view reply_field;
  std::vector<std::string> expected;  // what the plan expected of it, a README line each
};

// The purchases of one kind of commitment, and README notes that hold for the kind.
struct CommitmentKind {
  std::vector<CommitmentPurchase> purchases;
  std::vector<std::string> notes;
};

constexpr std::string_view kFolder = "commitments";
constexpr std::string_view kOfferingIdField = "ReservedInstancesOfferings[0].ReservedInstancesOfferingId";
constexpr int kRegionalReservationsPerMonth = 20;  // EC2 User Guide, "Reserved Instance quotas"

// The plan's pools are AWS's (a plan has its scenario's one provider).
bool aws_plan(const Plan& plan) {
  return !plan.pools.empty() &&
         std::all_of(plan.pools.begin(), plan.pools.end(), [](const PlannedPool& pool) { return pool.provider == "aws"; });
}

// The upfront the plan expects for the whole order, where the payment has an upfront part: the
// offer's upfront times the count or, where the price source gave only an effective rate (upfront
// zero), what the term valuation derived from it. nullopt: no upfront part, or none known.
struct PlannedUpfront {
  Money total;
  bool derived = false;
};
std::optional<PlannedUpfront> planned_upfront(const CommitmentRecommendation& commitment) {
  if (commitment.terms.payment == UpfrontPayment::no_upfront) return std::nullopt;
  if (commitment.upfront_per_instance > Money{}) return PlannedUpfront{commitment.upfront_per_instance.times(commitment.count)};
  if (commitment.term.upfront_cash > Money{}) return PlannedUpfront{commitment.term.upfront_cash, true};
  return std::nullopt;
}

// LimitPrice.Amount: USD, rounded up to whole cents (AWS's prices are in cents) so that the cap is
// never below the plan's own figure.
double limit_amount(Money total) {
  constexpr std::int64_t kMicroUsdPerCent = 10'000;
  return static_cast<double>((total.micro_usd() + kMicroUsdPerCent - 1) / kMicroUsdPerCent) / 100.0;
}

// AWS's own regional Linux offering of exactly the plan's terms.
ordered_json describe_offerings_request(const CommitmentRecommendation& commitment) {
  const std::int64_t term_seconds = reservation_term_length(commitment.terms.term).count();
  return ordered_json{{"InstanceType", commitment.instance_type},
                      {"ProductDescription", "Linux/UNIX"},
                      {"InstanceTenancy", "default"},
                      {"OfferingClass", reservation_class_name(commitment.terms.reservation_class)},
                      {"OfferingType", aws_payment_option_name(commitment.terms.payment)},
                      {"MinDuration", term_seconds},
                      {"MaxDuration", term_seconds},
                      {"IncludeMarketplace", false},
                      {"Filters", ordered_json::array({{{"Name", "scope"}, {"Values", ordered_json::array({"Region"})}}})}};
}

ordered_json purchase_offering_request(const CommitmentRecommendation& commitment,
                                       const std::optional<PlannedUpfront>& upfront) {
  ordered_json request{{"ReservedInstancesOfferingId", kReservedInstancesOfferingPlaceholder},
                       {"InstanceCount", commitment.count}};
  if (upfront) request["LimitPrice"] = {{"Amount", limit_amount(upfront->total)}, {"CurrencyCode", "USD"}};
  return request;
}

std::string usd(Money amount) { return "$" + format_usd(amount); }

std::vector<std::string> reservation_expectations(const CommitmentRecommendation& commitment,
                                                  const std::optional<PlannedUpfront>& upfront) {
  std::vector<std::string> lines;
  if (!commitment.renews.empty()) {
    lines.push_back("buy on " + format_instant(commitment.start) + ", not before: it " + commitment.reason +
                    " (bought earlier, the two would be paid for together)");
  }
  if (upfront) {
    lines.push_back("upfront " + usd(upfront->total) + " for the order" +
                    (upfront->derived ? " (derived from the price source's effective rate)" : "") +
                    ", the purchase's LimitPrice in whole cents rounded up");
  } else if (commitment.terms.payment != UpfrontPayment::no_upfront) {
    lines.emplace_back("upfront unknown to the plan (its price source gave no figure): no LimitPrice");
  }
  lines.push_back(usd(commitment.hourly_cost) + " an hour per instance, effective (any upfront spread over the term)");
  const TermValuation& term = commitment.term;
  if (term.months > 0) {
    lines.push_back("over " + std::to_string(term.months) + " months: expected net saving " + usd(term.expected_net_saving) +
                    " (p5 " + usd(term.net_saving_p5) + ", p95 " + usd(term.net_saving_p95) + "), " +
                    (term.break_even_month > 0 ? "breaking even in month " + std::to_string(term.break_even_month)
                                               : "not breaking even within them"));
  }
  return lines;
}

CommitmentPurchase reservation_purchase(const CommitmentRecommendation& commitment) {
  const std::optional<PlannedUpfront> upfront = planned_upfront(commitment);
  const ReservationTerms& terms = commitment.terms;
  return CommitmentPurchase{
      commitment.instance_type + "-" + commitment.region,
      commitment.region,
      std::to_string(commitment.count) + " x " + commitment.instance_type + " in " + commitment.region + ": " +
          std::string(reservation_term_name(terms.term)) + " " + std::string(reservation_class_name(terms.reservation_class)) +
          " " + std::string(upfront_payment_name(terms.payment)) + " Reserved Instances",
      {PurchaseCall{"ec2", "describe-reserved-instances-offerings", describe_offerings_request(commitment)},
       PurchaseCall{"ec2", "purchase-reserved-instances-offering", purchase_offering_request(commitment, upfront)}},
      kReservedInstancesOfferingPlaceholder,
      kOfferingIdField,
      reservation_expectations(commitment, upfront)};
}

// The regions and months (of the purchase dates, UTC) in which the plan buys more reservations
// than AWS's default monthly quota allows.
std::vector<std::string> quota_notes(const Plan& plan) {
  std::map<std::pair<std::string, std::string>, int> bought;
  for (const CommitmentRecommendation& commitment : plan.commitments) {
    bought[{commitment.region, format_instant(commitment.start).substr(0, 7)}] += commitment.count;
  }
  std::vector<std::string> notes;
  for (const auto& [region_month, count] : bought) {
    if (count <= kRegionalReservationsPerMonth) continue;
    const std::string quota = std::to_string(kRegionalReservationsPerMonth);
    notes.push_back(region_month.first + ", " + region_month.second + ": " + std::to_string(count) +
                    " Reserved Instances, above AWS's default quota of " + quota +
                    " new regional ones\n  per Region per month: ask AWS to raise it first, or buy " + quota +
                    " now (InstanceCount) and the rest next month.");
  }
  return notes;
}

CommitmentKind reservations(const Plan& plan) {
  CommitmentKind kind;
  for (const CommitmentRecommendation& commitment : plan.commitments) kind.purchases.push_back(reservation_purchase(commitment));
  if (kind.purchases.empty()) return kind;
  kind.notes.emplace_back(
      "Each describe call asks for AWS's own regional Linux/UNIX offering (default tenancy, no Marketplace\n"
      "  offerings) of the plan's term, class and payment; check that the one it returns charges what the\n"
      "  plan expected (FixedPrice times the count, RecurringCharges) before buying. The EC2 API documents\n"
      "  LimitPrice for Marketplace offerings: a cap on the order's upfront, not a substitute for that check.");
  for (std::string& note : quota_notes(plan)) kind.notes.push_back(std::move(note));
  return kind;
}

// Adds the purchase's request files under `folder` to `files` and returns its README lines.
std::string write_purchase(const CommitmentPurchase& purchase, const std::string& number, const fs::path& folder,
                           std::vector<ExportFile>& files) {
  std::string text = number + ". " + purchase.title + "\n";
  for (std::size_t c = 0; c < purchase.calls.size(); ++c) {
    const PurchaseCall& call = purchase.calls[c];
    const fs::path path = folder / (sequence_number(c + 1, purchase.calls.size()) + "-" + call.operation + ".json");
    files.push_back(ExportFile{path, json_text::dump(call.request, 2) + "\n"});
    if (c > 0 && c + 1 == purchase.calls.size()) {
      text += "    then replace " + std::string(purchase.placeholder) + " in " + path.filename().string() + " with " +
              std::string(purchase.reply_field) + " of that reply\n";
    }
    text += "  aws " + call.service + " " + call.operation + " --region " + purchase.region + " --cli-input-json file://" +
            path.generic_string() + "\n";
  }
  for (const std::string& line : purchase.expected) text += "    plan: " + line + "\n";
  return text;
}

std::string nothing_to_buy(const Plan& plan) {
  std::string text = "No commitment is recommended: the plan buys no reservation";
  if (!plan.declined_commitments.empty()) {
    text += " (" + std::to_string(plan.declined_commitments.size()) +
            " that the horizon alone favoured do not pay over their term: the plan's declined_commitments say why)";
  }
  return text + ".\n";
}

}  // namespace

Status add_commitment_purchases(const Plan& plan, std::vector<ExportFile>& files) {
  if (!aws_plan(plan)) return {};
  const auto readme = std::find_if(files.begin(), files.end(), [](const ExportFile& file) { return file.path == "README.txt"; });
  if (readme == files.end()) return internal_error("the export has no README.txt to list the commitments to buy in");
  const std::vector<CommitmentKind> kinds{reservations(plan)};
  std::size_t count = 0;
  for (const CommitmentKind& kind : kinds) count += kind.purchases.size();
  std::string section = "\nCommitments to buy:\n";
  if (count == 0) {
    section += nothing_to_buy(plan);
  } else {
    section += "The documents above buy no commitment. Someone with billing rights runs these requests with\n"
               "the AWS CLI from this folder, each purchase's in order: its first call finds AWS's current offering,\n"
               "whose id the purchase names (it cannot be known beforehand). The files name no region: pass it\n"
               "with --region, as below.\n\n";
  }
  std::vector<ExportFile> requests;
  std::string notes;
  std::size_t number = 0;
  for (const CommitmentKind& kind : kinds) {
    for (const CommitmentPurchase& purchase : kind.purchases) {
      const std::string prefix = sequence_number(++number, count);
      section += write_purchase(purchase, prefix, fs::path(kFolder) / (prefix + "-" + purchase.name), requests);
    }
    for (const std::string& note : kind.notes) notes += "- " + note + "\n";
  }
  if (!notes.empty()) section += "\nNotes on buying:\n" + notes;
  readme->contents += section;
  files.insert(readme, std::make_move_iterator(requests.begin()), std::make_move_iterator(requests.end()));
  return {};
}

}  // namespace fleetcast::exporters
