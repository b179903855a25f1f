// The commitments a plan recommends, as the requests that buy them (add_commitment_purchases).
//
// Auto Scaling, CloudFormation and Kubernetes apply capacity; none of them buys a commitment, which
// someone with billing rights does with the AWS CLI. So every format that exports an AWS plan gets
// the same documents, written here beside its own: per commitment, a describe call that finds AWS's
// current offering of the plan's terms, then the call that buys it, holding a placeholder where the
// offering's id goes (an id cannot be known offline), and a section of README.txt with the
// commands in order and what the plan expected of each purchase.
//
// A kind of commitment is one function from the plan to a CommitmentKind (reservations: `aws ec2
// describe-reserved-instances-offerings` then `purchase-reserved-instances-offering`; Savings Plans:
// `aws savingsplans describe-savings-plans-offerings` then `create-savings-plan`): file names,
// numbering and the README section are written from CommitmentKinds alone.
//
// Dates: a purchase at the horizon's start is made now. A renewal of an owned commitment is queued
// for its expiry (PurchaseTime, purchaseTime), as AWS lets a purchase wait up to three years (EC2
// User Guide, "Buy Reserved Instances", queue your purchase; regional Reserved Instances only,
// which the describe request pins). A ladder's later purchase is not queued: it depends on the
// demand by then, so README.txt says to plan again on its date and buy only what that plan
// recommends; its requests are written for reference.
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
//  - PurchaseReservedInstancesOffering's PurchaseTime: "the time at which to purchase the Reserved
//    Instance, in UTC format".
//  - Savings Plans API Reference and botocore 1.43.11's savingsplans model: DescribeSavingsPlansOfferings
//    takes productType (EC2), planTypes (Compute | EC2Instance), durations in seconds,
//    paymentOptions ("No Upfront" ...), currencies, and filters by region and instanceFamily;
//    CreateSavingsPlan takes savingsPlanOfferingId and commitment (required; "a value between 0.001
//    and 1 million", at most five decimals, as a string), upfrontPaymentAmount ("a whole number
//    between 50 and 99 percent of the total value", Partial Upfront only) and purchaseTime. The
//    service has one endpoint, in us-east-1, whatever regions a plan covers.
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
constexpr std::string_view kSavingsPlanOfferingIdField = "searchResults[0].offeringId";
constexpr int kRegionalReservationsPerMonth = 20;  // EC2 User Guide, "Reserved Instance quotas"

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

// When a purchase is made: now, queued for a renewal's date, or on a ladder's later date after
// planning again (see the top of the file).
enum class PurchaseTiming { now, queued, replan };
PurchaseTiming timing(Instant start, const std::string& renews, const Plan& plan) {
  if (!renews.empty()) return PurchaseTiming::queued;
  return start > plan.horizon.start ? PurchaseTiming::replan : PurchaseTiming::now;
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
                                       const std::optional<PlannedUpfront>& upfront, PurchaseTiming when) {
  ordered_json request{{"ReservedInstancesOfferingId", kReservedInstancesOfferingPlaceholder},
                       {"InstanceCount", commitment.count}};
  if (upfront) request["LimitPrice"] = {{"Amount", limit_amount(upfront->total)}, {"CurrencyCode", "USD"}};
  if (when == PurchaseTiming::queued) request["PurchaseTime"] = format_instant(commitment.start);
  return request;
}

std::string usd(Money amount) { return "$" + format_usd(amount); }

// The README line of a dated purchase; nothing for one made now.
std::vector<std::string> date_lines(PurchaseTiming when, Instant start, const std::string& reason) {
  if (when == PurchaseTiming::queued) {
    return {"queued for " + format_instant(start) + " by its purchase time: it " + reason +
            " (bought earlier, the two would be paid for together)"};
  }
  if (when == PurchaseTiming::replan) {
    return {"a ladder's later purchase: on " + format_instant(start) + ", not before, plan again with the history up to then "
            "and buy only what that plan recommends (not queued: it depends on the demand by then)"};
  }
  return {};
}

std::string term_line(const TermValuation& term) {
  return "over " + std::to_string(term.months) + " months: expected net saving " + usd(term.expected_net_saving) + " (p5 " +
         usd(term.net_saving_p5) + ", p95 " + usd(term.net_saving_p95) + "), " +
         (term.break_even_month > 0 ? "breaking even in month " + std::to_string(term.break_even_month)
                                    : "not breaking even within them");
}

std::vector<std::string> reservation_expectations(const CommitmentRecommendation& commitment,
                                                  const std::optional<PlannedUpfront>& upfront, PurchaseTiming when) {
  std::vector<std::string> lines = date_lines(when, commitment.start, commitment.reason);
  if (upfront) {
    lines.push_back("upfront " + usd(upfront->total) + " for the order" +
                    (upfront->derived ? " (derived from the price source's effective rate)" : "") +
                    ", the purchase's LimitPrice in whole cents rounded up");
  } else if (commitment.terms.payment != UpfrontPayment::no_upfront) {
    lines.emplace_back("upfront unknown to the plan (its price source gave no figure): no LimitPrice");
  }
  lines.push_back(usd(commitment.hourly_cost) + " an hour per instance, effective (any upfront spread over the term)");
  if (commitment.term.months > 0) lines.push_back(term_line(commitment.term));
  return lines;
}

CommitmentPurchase reservation_purchase(const CommitmentRecommendation& commitment, const Plan& plan) {
  const std::optional<PlannedUpfront> upfront = planned_upfront(commitment);
  const PurchaseTiming when = timing(commitment.start, commitment.renews, plan);
  const ReservationTerms& terms = commitment.terms;
  return CommitmentPurchase{
      commitment.instance_type + "-" + commitment.region,
      commitment.region,
      std::to_string(commitment.count) + " x " + commitment.instance_type + " in " + commitment.region + ": " +
          std::string(reservation_term_name(terms.term)) + " " + std::string(reservation_class_name(terms.reservation_class)) +
          " " + std::string(upfront_payment_name(terms.payment)) + " Reserved Instances",
      {PurchaseCall{"ec2", "describe-reserved-instances-offerings", describe_offerings_request(commitment)},
       PurchaseCall{"ec2", "purchase-reserved-instances-offering", purchase_offering_request(commitment, upfront, when)}},
      kReservedInstancesOfferingPlaceholder,
      kOfferingIdField,
      reservation_expectations(commitment, upfront, when)};
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

// The purchases of `recommended` (reservations or Savings Plans), and `note` where there is any.
template <typename Recommendation, typename Purchase>
CommitmentKind kind_of(const std::vector<Recommendation>& recommended, const Plan& plan, Purchase purchase, const char* note) {
  CommitmentKind kind;
  for (const Recommendation& recommendation : recommended) kind.purchases.push_back(purchase(recommendation, plan));
  if (!kind.purchases.empty()) kind.notes.emplace_back(note);
  return kind;
}

CommitmentKind reservations(const Plan& plan) {
  CommitmentKind kind = kind_of(
      plan.commitments, plan, reservation_purchase,
      "Each describe call asks for AWS's own regional Linux/UNIX offering (default tenancy, no Marketplace\n"
      "  offerings) of the plan's term, class and payment; check that the one it returns charges what the\n"
      "  plan expected (FixedPrice times the count, RecurringCharges) before buying. The EC2 API documents\n"
      "  LimitPrice for Marketplace offerings: a cap on the order's upfront, not a substitute for that check.");
  for (std::string& note : quota_notes(plan)) kind.notes.push_back(std::move(note));
  return kind;
}

// A Savings Plan's hourly commitment as CreateSavingsPlan takes it: USD with three decimals (the
// plan's precision), as a string.
std::string commitment_text(Money hourly) {
  const std::int64_t thousandths = hourly.micro_usd() / 1000;
  char text[40];
  std::snprintf(text, sizeof text, "%lld.%03lld", static_cast<long long>(thousandths / 1000),
                static_cast<long long>(thousandths % 1000));
  return text;
}

// Half the plan's total commitment over its term, in whole dollars rounded up: the least
// upfrontPaymentAmount AWS takes for Partial Upfront (50% of the total value), as the planner
// valued it.
std::string half_upfront_text(const SavingsPlan& plan) {
  const std::int64_t hours = reservation_term_length(plan.term).count() / 3600;
  const std::int64_t half_micro = (plan.hourly_commitment.micro_usd() * hours + 1) / 2;
  return std::to_string((half_micro + 999'999) / 1'000'000);
}

ordered_json describe_savings_plan_offerings_request(const SavingsPlan& plan) {
  const bool instance = plan.type == SavingsPlanType::ec2_instance;
  ordered_json request{{"productType", "EC2"},
                       {"planTypes", ordered_json::array({instance ? "EC2Instance" : "Compute"})},
                       {"durations", ordered_json::array({reservation_term_length(plan.term).count()})},
                       {"paymentOptions", ordered_json::array({aws_payment_option_name(plan.payment)})},
                       {"currencies", ordered_json::array({"USD"})}};
  if (instance) {
    request["filters"] = ordered_json::array({{{"name", "region"}, {"values", ordered_json::array({plan.region})}},
                                              {{"name", "instanceFamily"}, {"values", ordered_json::array({plan.family})}}});
  }
  return request;
}

ordered_json create_savings_plan_request(const SavingsPlan& plan, PurchaseTiming when) {
  ordered_json request{{"savingsPlanOfferingId", kSavingsPlanOfferingPlaceholder},
                       {"commitment", commitment_text(plan.hourly_commitment)}};
  if (plan.payment == UpfrontPayment::partial_upfront) request["upfrontPaymentAmount"] = half_upfront_text(plan);
  if (when == PurchaseTiming::queued) request["purchaseTime"] = format_instant(plan.start);
  return request;
}

CommitmentPurchase savings_plan_purchase(const SavingsPlanRecommendation& bought, const Plan& plan) {
  const SavingsPlan& bought_plan = bought.plan;
  const PurchaseTiming when = timing(bought_plan.start, bought.renews, plan);
  std::vector<std::string> expected = date_lines(when, bought_plan.start, bought.reason);
  if (bought_plan.payment != UpfrontPayment::no_upfront) {
    expected.push_back("upfront " + usd(bought.upfront) +
                       (bought_plan.payment == UpfrontPayment::partial_upfront
                            ? ", half the term's commitment: upfrontPaymentAmount in whole dollars rounded up"
                            : ", the whole term's commitment"));
  }
  expected.push_back("at the horizon's planned usage " + std::to_string(static_cast<int>(bought.expected_utilisation * 100 + 0.5)) +
                     "% of the commitment spent; " + usd(bought.expected_saving) + " saved over the horizon");
  if (bought.term.months > 0) expected.push_back(term_line(bought.term));
  const std::string scope = bought_plan.type == SavingsPlanType::compute
                                ? "compute"
                                : "ec2instance-" + bought_plan.family + "-" + bought_plan.region;
  return CommitmentPurchase{
      scope + "-savings-plan",
      "us-east-1",  // the Savings Plans API's one endpoint (see the top of the file)
      savings_plan_label(bought_plan),
      {PurchaseCall{"savingsplans", "describe-savings-plans-offerings", describe_savings_plan_offerings_request(bought_plan)},
       PurchaseCall{"savingsplans", "create-savings-plan", create_savings_plan_request(bought_plan, when)}},
      kSavingsPlanOfferingPlaceholder,
      kSavingsPlanOfferingIdField,
      std::move(expected)};
}

CommitmentKind savings_plans(const Plan& plan) {
  return kind_of(plan.savings_plans, plan, savings_plan_purchase,
                 "Each Savings Plan describe call asks for AWS's EC2 offering of the plan's type, term and payment (and,\n"
                 "  for an EC2 Instance plan, its family and region) in USD; the plan's rates were imported or estimated\n"
                 "  as its notes say: check the offering's rates before buying.");
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
  std::string text = "No commitment is recommended: the plan buys no reservation and no Savings Plan";
  if (!plan.declined_commitments.empty()) {
    text += " (" + std::to_string(plan.declined_commitments.size()) +
            " that the horizon alone favoured do not pay over their term: the plan's declined_commitments say why)";
  }
  return text + ".\n";
}

}  // namespace

bool aws_plan(const Plan& plan) {
  return !plan.pools.empty() &&
         std::all_of(plan.pools.begin(), plan.pools.end(), [](const PlannedPool& pool) { return pool.provider == "aws"; });
}

Status add_commitment_purchases(const Plan& plan, std::vector<ExportFile>& files) {
  if (!aws_plan(plan)) return {};
  auto readme = readme_file(files);
  if (!readme.ok()) return readme.status();
  const std::vector<CommitmentKind> kinds{reservations(plan), savings_plans(plan)};
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
  (*readme)->contents += section;
  files.insert(*readme, std::make_move_iterator(requests.begin()), std::make_move_iterator(requests.end()));
  return {};
}

}  // namespace fleetcast::exporters
