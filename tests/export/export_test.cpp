// The exporters: what AWS enforces is checked before anything is written (each violation named
// with its group, field, value and limit, and no files left), the schedule is split into batches
// of at most 50, and the documents carry the plan's numbers. The real-client checks (botocore,
// moto, cfn-lint, kubectl) are the python scripts beside this file.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <tuple>

#include <nlohmann/json.hpp>

#include "export/aws_limits.h"
#include "export/exporters.h"
#include "export/keda.h"

using namespace fleetcast;
using namespace fleetcast::exporters;
namespace fs = std::filesystem;

namespace {

// The fixture: chat on H100/A100 in two regions (on-demand base, spot above), a batch workload on
// L40S spot; the us-east-1 chat group has 72 hourly changes.
Plan fixture_plan() {
  auto plan = load_plan(FLEETCAST_SOURCE_DIR "/tests/export/two_regions_plan.json");
  REQUIRE(plan.ok());
  return *plan;
}

// Renders and writes, as `fleetcast export` does without --scenario.
Status export_plan(const Plan& plan, ExportFormat format, const fs::path& out, const ExportOptions& options = {}) {
  auto rendered = render_export(plan, format, options);
  if (!rendered.ok()) return rendered.status();
  return write_export(rendered->files, out);
}

// An output folder path (absent) in an empty folder of its own, `name` being unique to the test
// case: ctest runs test cases in parallel processes.
fs::path fresh_out(const std::string& name) {
  const fs::path parent = fs::path(FLEETCAST_TEST_OUTPUT_DIR) / "export" / name;
  fs::remove_all(parent);
  fs::create_directories(parent);
  return parent / "out";
}

// Exports `plan` in every format and requires each to be refused with a message holding every
// one of `expected`, leaving nothing beside the output folder.
void require_refused(const Plan& plan, const std::string& name, std::initializer_list<std::string> expected) {
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    const fs::path out = fresh_out(name);
    const Status status = export_plan(plan, format, out);
    INFO(status.message());
    REQUIRE_FALSE(status.ok());
    CHECK(status.code() == StatusCode::invalid_argument);
    for (const std::string& text : expected) CHECK(status.message().find(text) != std::string::npos);
    CHECK_FALSE(fs::exists(out));
    CHECK(fs::is_empty(out.parent_path()));
  }
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

const std::string kEast = "llm-two-regions-chat-us-east-1";

// The rendered file at `path`; fails the test case when there is none.
const ExportFile& rendered_file(const RenderedExport& rendered, const fs::path& path) {
  const auto found = std::find_if(rendered.files.begin(), rendered.files.end(),
                                  [&](const ExportFile& file) { return file.path == path; });
  REQUIRE(found != rendered.files.end());
  return *found;
}

std::size_t commitment_files(const RenderedExport& rendered) {
  return static_cast<std::size_t>(std::count_if(rendered.files.begin(), rendered.files.end(), [](const ExportFile& file) {
    return file.path.begin()->string() == "commitments";
  }));
}

nlohmann::json rendered_json(const RenderedExport& rendered, const fs::path& path) {
  return nlohmann::json::parse(rendered_file(rendered, path).contents);
}

// The DescribeReservedInstancesOfferings request of AWS's regional Linux offering of these terms.
nlohmann::json describe_request(const std::string& instance_type, const std::string& offering_class,
                                const std::string& offering_type, std::int64_t term_seconds) {
  return {{"InstanceType", instance_type}, {"ProductDescription", "Linux/UNIX"}, {"InstanceTenancy", "default"},
          {"OfferingClass", offering_class}, {"OfferingType", offering_type}, {"MinDuration", term_seconds},
          {"MaxDuration", term_seconds}, {"IncludeMarketplace", false},
          {"Filters", {{{"Name", "scope"}, {"Values", {"Region"}}}}}};
}

// Two reservations to buy: 2 x p5.48xlarge in us-east-1, 3y standard all upfront ($400,000.123456
// each, valued over its term), and 3 x g6e.xlarge in us-west-2, 1y convertible no upfront.
// Both bought at the start of fixture_plan()'s horizon.
std::vector<CommitmentRecommendation> two_reservations() {
  CommitmentRecommendation all_upfront;
  all_upfront.instance_type = "p5.48xlarge";
  all_upfront.region = "us-east-1";
  all_upfront.count = 2;
  all_upfront.terms = {ReservationTerm::three_years, ReservationClass::standard, UpfrontPayment::all_upfront};
  all_upfront.upfront_per_instance = Money::from_micro_usd(400'000'123'456);
  all_upfront.hourly_cost = Money::from_micro_usd(15'221'000);
  all_upfront.term.months = 36;
  all_upfront.term.expected_net_saving = Money::from_micro_usd(100'000'000'000);
  all_upfront.term.net_saving_p5 = Money::from_micro_usd(-50'000'000'000);
  all_upfront.term.net_saving_p95 = Money::from_micro_usd(250'000'000'000);
  all_upfront.term.upfront_cash = Money::from_micro_usd(800'000'246'912);
  all_upfront.term.break_even_month = 20;
  CommitmentRecommendation no_upfront;
  no_upfront.instance_type = "g6e.xlarge";
  no_upfront.region = "us-west-2";
  no_upfront.count = 3;
  no_upfront.terms = {ReservationTerm::one_year, ReservationClass::convertible, UpfrontPayment::no_upfront};
  no_upfront.hourly_cost = Money::from_micro_usd(1'500'000);
  all_upfront.start = no_upfront.start = fixture_plan().horizon.start;
  return {all_upfront, no_upfront};
}


}  // namespace

TEST_CASE("exporters refuse an instance type weight outside 1-999 and write nothing", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[0].instance_types[1].weighted_capacity = 1000;
  require_refused(plan, "weight", {"group '" + kEast + "'", "MixedInstancesPolicy.LaunchTemplate.Overrides[1].WeightedCapacity is 1000",
                         "AWS allows a whole number from 1 to 999"});
}

TEST_CASE("exporters refuse an on-demand percentage above 100", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[1].distribution.on_demand_percentage_above_base = 101;
  require_refused(plan, "percentage", {"group 'llm-two-regions-chat-us-west-2'",
                         "InstancesDistribution.OnDemandPercentageAboveBaseCapacity is 101",
                         "AWS allows a percentage from 0 to 100"});
}

TEST_CASE("exporters refuse a schedule change outside Min <= Desired <= Max", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[0].schedule[60].desired_capacity = 200;  // the group's maximum is 128
  require_refused(plan, "schedule-sizes", {"is 200, 200, 128", "AWS requires MinSize <= DesiredCapacity <= MaxSize"});
}

TEST_CASE("exporters refuse a group whose desired capacity is below its minimum", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[2].min_capacity = 20;  // the first change wants 16
  require_refused(plan, "group-sizes", {"group 'llm-two-regions-finetune-us-east-1': MinSize, DesiredCapacity, MaxSize is 20, 16, 64"});
}

TEST_CASE("exporters refuse a target-tracking policy without exactly one metric", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[1].target_tracking.metric = "queue_depth";
  require_refused(plan, "metric", {"TargetTrackingConfiguration is 0 metrics", "exactly one metric per target-tracking policy"});
}

TEST_CASE("exporters refuse a metric period AWS target tracking does not accept", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[0].target_tracking.metric_period = Seconds{20};  // a plan built in code: the reader refuses it
  require_refused(plan, "period", {"TargetTrackingConfiguration.CustomizedMetricSpecification.Period is 20; AWS accepts 10, 30 and 60 seconds"});
}

TEST_CASE("exporters refuse an instance warm-up AWS does not take, at its full value", "[export]") {
  Plan plan = fixture_plan();
  // 2^32 + 90 s: read as 32 bits it would be 90 s, and exported as such.
  plan.groups[0].target_tracking.instance_warmup = Seconds{4'294'967'386};
  require_refused(plan, "warmup", {"DefaultInstanceWarmup is 4294967386; AWS allows 0 to 3600 seconds",
                                   "EstimatedInstanceWarmup is 4294967386; AWS allows 0 to 2147483647 seconds"});
  plan.groups[0].target_tracking.instance_warmup = Seconds{3601};
  require_refused(plan, "warmup-hour", {"DefaultInstanceWarmup is 3601; AWS allows 0 to 3600 seconds"});
}

TEST_CASE("exporters refuse a region that is not an AWS region code", "[export]") {
  for (const std::string region : {"us-east-1;touch${IFS}/tmp/x;#", "mars", "us-east-", "us-east-1a", "US-EAST-1", "u-east-1"}) {
    Plan plan = fixture_plan();
    plan.groups[1].region = region;
    require_refused(plan, "region", {"group 'llm-two-regions-chat-us-west-2': region is '" + region + "'",
                                     "AWS region codes are an area, a direction and a number"});
  }
}

TEST_CASE("exporters refuse more than 40 instance types and names AWS does not take", "[export]") {
  Plan plan = fixture_plan();
  plan.groups[2].instance_types.clear();
  for (int i = 0; i < 41; ++i) plan.groups[2].instance_types.push_back({"g6e." + std::to_string(i) + "xlarge", 1});
  plan.groups[1].name = "chat:us-west-2";
  require_refused(plan, "overrides-names", {"Overrides is 41 instance types; AWS accepts 1 to 40",
                         "AutoScalingGroupName is 'chat:us-west-2'; AWS allows 1 to 255 ASCII characters 33 to 126 (no space) without ':'",
                         "LaunchTemplateName is 'chat:us-west-2'"});
  plan = fixture_plan();
  plan.groups[1].name = "chat us-west-2";  // ASCII 32: "any ASCII character 33 to 126"
  require_refused(plan, "names-space", {"AutoScalingGroupName is 'chat us-west-2'; AWS allows 1 to 255 ASCII characters 33 to 126"});
}

TEST_CASE("README.txt quotes a file path that a shell would read specially", "[export]") {
  CHECK(shell_word("file://chat-us-east-1/02-create-auto-scaling-group.json") ==
        "file://chat-us-east-1/02-create-auto-scaling-group.json");
  CHECK(shell_word("file://grp(1)/x.json") == "'file://grp(1)/x.json'");
  CHECK(shell_word("it's $HOME") == "'it'\\''s $HOME'");
  CHECK(shell_word("") == "''");
  // The shell reads each quoted word back as the text itself.
  for (const std::string text : {"file://grp(1)/x.json", "it's $HOME; `x` \\ \"q\"", ""}) {
    const std::string command = "printf '%s|' " + shell_word(text);
    FILE* pipe = popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string read;
    for (int c = std::fgetc(pipe); c != EOF; c = std::fgetc(pipe)) read += static_cast<char>(c);
    CHECK(pclose(pipe) == 0);
    CHECK(read == text + "|");
  }
  // A hand-edited group name that AWS takes (ASCII 33-126; a launch template name allows '(' and ')').
  Plan plan = fixture_plan();
  plan.groups.front().name = "grp(1)";
  auto rendered = render_export(plan, ExportFormat::aws, {});
  REQUIRE(rendered.ok());
  const std::string& readme = rendered_file(*rendered, "README.txt").contents;
  CHECK_THAT(readme, Catch::Contains("--cli-input-json 'file://grp(1)/02-create-auto-scaling-group.json'\n"));
}

TEST_CASE("a scenario name of any length and characters gives tags, descriptions and stack names AWS takes", "[export]") {
  // Tag values: at most 256 characters (Tag); VersionDescription: at most 255 (CreateLaunchTemplate);
  // a stack name: a letter, then letters, digits and '-', at most 128 (CloudFormation).
  Plan plan = fixture_plan();
  plan.scenario = "2nd fleet; it's " + std::string(300, 'x');
  require_refused(plan, "long-scenario", {"Tags[fleetcast:scenario] is 316 characters; AWS allows keys of 1 to 128 and values of at most 256"});

  plan.scenario = "2nd fleet; it's \xc3\xbc" + std::string(235, 'x');  // a tag of 253 bytes; "fleetcast plan of " makes 271
  auto aws = render_export(plan, ExportFormat::aws);
  REQUIRE(aws.ok());
  const auto launch_template = std::find_if(aws->files.begin(), aws->files.end(), [](const ExportFile& file) {
    return file.path.filename() == "01-create-launch-template.json";
  });
  REQUIRE(launch_template != aws->files.end());
  const std::string description = nlohmann::json::parse(launch_template->contents)["VersionDescription"];
  CHECK(description.size() == 255);
  CHECK_THAT(description, Catch::StartsWith("fleetcast plan of 2nd fleet; it's \xc3\xbc"));

  auto cloudformation = render_export(plan, ExportFormat::cloudformation);
  REQUIRE(cloudformation.ok());
  const std::string readme = cloudformation->files.back().contents;
  const std::regex stack_name("--stack-name ([^ ]+) ");
  std::size_t stacks = 0;
  for (auto match = std::sregex_iterator(readme.begin(), readme.end(), stack_name); match != std::sregex_iterator(); ++match) {
    const std::string name = (*match)[1];
    INFO(name);
    CHECK(std::regex_match(name, std::regex("[A-Za-z][-A-Za-z0-9]{0,127}")));
    CHECK_THAT(name, Catch::StartsWith("fleetcast-2nd-fleet-it-s-xxx"));
    ++stacks;
  }
  CHECK(stacks == 2);  // one per region
}

TEST_CASE("aws_limits checks recurrences, time zones and batch sizes of any scheduled action", "[export]") {
  Violations violations;
  AwsScheduledAction weekday{"weekday-morning", std::nullopt, std::nullopt, "0 8 * * 1-5", "America/New_York", 2, 8, 4};  // min, max, desired
  check_scheduled_action(weekday, "group 'g'", "action", violations);
  CHECK(violations.empty());

  AwsScheduledAction broken{"broken", std::nullopt, std::nullopt, "0 25 * * *", "Mars/Olympus Mons", std::nullopt, std::nullopt, std::nullopt};
  check_scheduled_action(broken, "group 'g'", "action", violations);
  const std::string message = violations.status().message();
  CHECK(message.find("action.Recurrence is '0 25 * * *'; AWS requires a five-field cron expression") != std::string::npos);
  CHECK(message.find("action.TimeZone is 'Mars/Olympus Mons'") != std::string::npos);
  CHECK(message.find("AWS requires at least one of MinSize, MaxSize and DesiredCapacity") != std::string::npos);

  Violations batch_violations;
  const std::vector<AwsScheduledAction> batch(51, AwsScheduledAction{"same", Instant{}, std::nullopt, "", "", 1, 1, 1});
  check_scheduled_action_batch(batch, "group 'g'", batch_violations);
  const std::string batch_message = batch_violations.status().message();
  CHECK(batch_message.find("ScheduledUpdateGroupActions is 51 actions; AWS accepts 1 to 50") != std::string::npos);
  CHECK(batch_message.find("ScheduledUpdateGroupActions[1].ScheduledActionName is 'same'; AWS requires distinct") !=
        std::string::npos);
}

TEST_CASE("aws export writes a 72-change daily schedule as 14 recurring actions in one batch", "[export]") {
  // The us-east-1 chat group repeats one day three times: 14 level changes a day, the level in
  // force at midnight (16 GPUs) set from 22:00.
  const Plan plan = fixture_plan();
  const fs::path out = fresh_out("aws");
  REQUIRE(export_plan(plan, ExportFormat::aws, out).ok());
  const fs::path group = out / kEast;
  const auto batch = read_json(group / "03-batch-put-scheduled-update-group-action-01.json");
  CHECK_FALSE(fs::exists(group / "03-batch-put-scheduled-update-group-action-02.json"));
  const auto& actions = batch["ScheduledUpdateGroupActions"];
  REQUIRE(actions.size() == 14);
  CHECK(actions[0]["ScheduledActionName"] == kEast + "-daily-20270104T000000Z");
  CHECK(actions[0]["Recurrence"] == "0 22 * * *");
  CHECK(actions[0]["DesiredCapacity"] == 16);
  CHECK(actions[0]["EndTime"] == "2027-01-06T22:01:00Z");
  CHECK(actions[1]["StartTime"] == "2027-01-04T07:00:00Z");
  CHECK(actions[1]["Recurrence"] == "0 7 * * *");
  CHECK(actions[1]["DesiredCapacity"] == 32);
  CHECK(actions[1]["MinSize"] == 32);
  CHECK(actions[1]["MaxSize"] == 128);
  CHECK(actions[1]["TimeZone"] == "Etc/UTC");

  const auto create = read_json(group / "02-create-auto-scaling-group.json");
  CHECK(create["DesiredCapacity"] == 16);
  CHECK(create["MinSize"] == 16);
  CHECK(create["MaxSize"] == 128);
  CHECK(create["DesiredCapacityType"] == "units");
  CHECK(create["MixedInstancesPolicy"]["LaunchTemplate"]["Overrides"][0] ==
        nlohmann::json{{"InstanceType", "p4de.24xlarge"}, {"WeightedCapacity", "8"}});
  CHECK(create["MixedInstancesPolicy"]["InstancesDistribution"]["OnDemandBaseCapacity"] == 16);
  CHECK(create["MixedInstancesPolicy"]["InstancesDistribution"]["OnDemandPercentageAboveBaseCapacity"] == 20);
  CHECK(create["MixedInstancesPolicy"]["InstancesDistribution"]["SpotAllocationStrategy"] == "price-capacity-optimized");
  CHECK(create["CapacityRebalance"] == true);
  const auto policy = read_json(group / "04-put-scaling-policy.json");
  CHECK(policy["TargetTrackingConfiguration"]["CustomizedMetricSpecification"]["MetricName"] == "requests_per_gpu");
  CHECK(policy["TargetTrackingConfiguration"]["TargetValue"] == 1.5);
  // The plan states no metric period: AWS's default, which the plan was simulated with.
  CHECK(policy["TargetTrackingConfiguration"]["CustomizedMetricSpecification"]["Period"] == 60);
}

TEST_CASE("cloudformation export holds one template per region with the compressed schedules", "[export]") {
  const fs::path out = fresh_out("cloudformation");
  REQUIRE(export_plan(fixture_plan(), ExportFormat::cloudformation, out).ok());
  const auto east = read_json(out / "us-east-1.template.json");
  std::size_t actions = 0;
  for (const auto& [id, resource] : east["Resources"].items()) actions += resource["Type"] == "AWS::AutoScaling::ScheduledAction";
  CHECK(actions == 14 + 2);  // chat: 14 changes a day; finetune: 16 GPUs by night, 4 by day
  CHECK(east["Resources"]["LlmTwoRegionsChatUsEast1Action14"]["Properties"]["Recurrence"] == "0 21 * * *");
  CHECK(east["Resources"]["LlmTwoRegionsChatUsEast1Action14"]["Properties"]["DesiredCapacity"] == 32);
  CHECK(east["Parameters"]["Subnets"]["Type"] == "List<AWS::EC2::Subnet::Id>");
  CHECK(fs::exists(out / "us-west-2.template.json"));
}

TEST_CASE("export refuses more than 125 actions per group and a window that is not whole intervals or past the horizon",
          "[export]") {
  ExportOptions options;
  options.max_actions = 126;
  CHECK(render_export(fixture_plan(), ExportFormat::aws, options).status().message().find("expected 1 to 125") != std::string::npos);
  options.max_actions = 100;
  options.window = Seconds{5400};
  CHECK(render_export(fixture_plan(), ExportFormat::aws, options).status().message().find("multiple of the plan's step") !=
        std::string::npos);
  // The fixture plans 3 days: the whole of them exports, a step more does not.
  options.window = 3 * kDay;
  CHECK(render_export(fixture_plan(), ExportFormat::aws, options).ok());
  options.window = 3 * kDay + kHour;
  CHECK(render_export(fixture_plan(), ExportFormat::aws, options).status().message() ==
        "window 3d1h: expected at most the plan's horizon (3d); the plan holds no capacity past its end: plan a longer "
        "horizon or export less");
}

TEST_CASE("a rolling window exports only its intervals, as one-off actions", "[export]") {
  ExportOptions options;
  options.window = kDay;
  auto rendered = render_export(fixture_plan(), ExportFormat::aws, options);
  REQUIRE(rendered.ok());
  CHECK(rendered->exported.horizon.duration == kDay);
  CHECK(rendered->groups[0].actions == 15);  // the first day's 15 levels (midnight included), exactly
  CHECK(rendered->groups[0].recurring_actions == 0);
  CHECK(rendered->groups[0].extra_gpu_hours == 0);
  // Each action sets the group's desired capacity where it fires, which the exported plan states
  // for its simulation: at each of the day's 14 changes (the fixture has no launch lead, so each at
  // its interval's start); the action at the horizon's start sets what the group starts with.
  const Plan& exported = rendered->exported;
  const std::vector<int> held = planned_group_gpus(exported, exported.groups[0]);
  std::vector<Instant> changes;
  for (std::size_t k = 1; k < held.size(); ++k) {
    if (held[k] != held[k - 1]) changes.push_back(exported.horizon.start + kHour * static_cast<std::int64_t>(k));
  }
  CHECK(changes.size() == 14);
  CHECK(exported.groups[0].desired_capacity_sets == changes);
  auto cloudformation = render_export(fixture_plan(), ExportFormat::cloudformation, options);
  REQUIRE(cloudformation.ok());
  CHECK(cloudformation->exported.groups[0].desired_capacity_sets == changes);
  // KEDA runs the largest of its cron triggers and its metric: nothing resets the reactive part.
  auto kubernetes = render_export(fixture_plan(), ExportFormat::kubernetes, options);
  REQUIRE(kubernetes.ok());
  for (const PlannedGroup& group : kubernetes->exported.groups) CHECK(group.desired_capacity_sets.empty());
}

TEST_CASE("kubernetes export holds the daily schedule as KEDA cron triggers over weighted NodePools", "[export]") {
  const Plan plan = fixture_plan();
  const fs::path out = fresh_out("kubernetes");
  REQUIRE(export_plan(plan, ExportFormat::kubernetes, out).ok());
  // us-east-1 chat, interval 0: 2 on-demand p5 (16 GPUs) and no spot; pods of 8 GPUs (gcd of 8, 8).
  const auto on_demand = read_json(out / kEast / "02-deployment-on-demand.json");
  CHECK(on_demand["spec"]["replicas"] == 2);
  CHECK(on_demand["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"] == "8");

  // Spot (p5 + p4de spot pools) follows the same shape each of the 3 days: 0 replicas at night,
  // 2, 4, 6, 6, 8, 9, 10, 10, 10, 9, 8, 6, 6, 4, 2 from 07:00 to 21:00. Each level change is a
  // daily window over January 4-6, the two 6s and three 10s one window each: 11 cron triggers and
  // the prometheus one; the night is minReplicaCount's: 0, which KEDA reaches once no trigger has
  // been active for cooldownPeriod, the group's scale-in cooldown (900 s).
  CHECK_FALSE(fs::exists(out / kEast / "03-hpa-spot.json"));
  const auto spot = read_json(out / kEast / "03-scaledobject-spot.json");
  CHECK(spot["apiVersion"] == "keda.sh/v1alpha1");
  CHECK(spot["spec"]["scaleTargetRef"]["name"] == kEast + "-spot");
  CHECK(spot["spec"]["minReplicaCount"] == 0);
  CHECK(spot["spec"]["cooldownPeriod"] == 900);
  CHECK(spot["spec"]["pollingInterval"] == 30);
  // The most the plan holds (10) and the spot share of the group's room for target tracking: its
  // maximum capacity 128 GPUs over its peak of 112 leaves 16, 20% of it (3.2, rounded up to 4) on
  // demand above the base, 12 GPUs on spot: 2 pods of 8.
  CHECK(spot["spec"]["maxReplicaCount"] == 12);
  const auto& triggers = spot["spec"]["triggers"];
  REQUIRE(triggers.size() == 12);
  CHECK(triggers[0]["metadata"] == nlohmann::json{{"timezone", "Etc/UTC"}, {"start", "0 7 4-6 1 *"}, {"end", "0 8 4-6 1 *"},
                                                  {"desiredReplicas", "2"}});
  CHECK(triggers[5]["metadata"]["start"] == "0 13 4-6 1 *");
  // 9 replicas from 16:00: the 10s end the scale-in cooldown (900 s) earlier, less KEDA's 30 s
  // polling, to a whole minute (15:45:30 -> 15:46), and the HPA's stabilization holds them to 16:01.
  CHECK(triggers[5]["metadata"]["end"] == "46 15 4-6 1 *");
  CHECK(triggers[5]["metadata"]["desiredReplicas"] == "10");
  CHECK(triggers[11]["type"] == "prometheus");
  CHECK(triggers[11]["metadata"]["threshold"] == "1.5");
  CHECK(spot["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] == 900);
  // Scale-up as simulated: no stabilization, any number of pods (up to the 12 replicas) at once.
  CHECK(spot["spec"]["advanced"]["horizontalPodAutoscalerConfig"]["behavior"]["scaleUp"] ==
        nlohmann::json{{"stabilizationWindowSeconds", 0}, {"selectPolicy", "Max"},
                       {"policies", {{{"type", "Pods"}, {"value", 12}, {"periodSeconds", 15}}}}});
  // The on-demand part: at most 4 pods planned, and the 4 GPUs of room, 1 pod.
  CHECK(read_json(out / kEast / "03-scaledobject-on-demand.json")["spec"]["maxReplicaCount"] == 5);

  // us-west-2's on-demand part is one p5 throughout: flat, an HPA.
  const fs::path west = out / "llm-two-regions-chat-us-west-2";
  CHECK(read_json(west / "03-hpa-on-demand.json")["spec"]["minReplicas"] == 1);
  // Its group puts nothing above the base on demand (0%): all its room (48 - 40 GPUs) is spot's.
  CHECK(read_json(west / "03-hpa-on-demand.json")["spec"]["maxReplicas"] == 1);
  CHECK_FALSE(fs::exists(west / "03-scaledobject-on-demand.json"));

  // The on-demand base (16 GPUs) is reserved capacity: reserved first, then on-demand, then spot.
  const auto reserved = read_json(out / kEast / "01-nodepool-reserved.json");
  CHECK(reserved["spec"]["weight"] == 30);
  CHECK(reserved["spec"]["limits"]["nvidia.com/gpu"] == "16");
  CHECK(reserved["spec"]["template"]["spec"]["requirements"][1]["values"] == nlohmann::json{"reserved"});
  CHECK(read_json(out / kEast / "01-nodepool-on-demand.json")["spec"]["weight"] == 20);
  CHECK(read_json(out / kEast / "01-nodepool-spot.json")["spec"]["weight"] == 10);
  const auto& affinity = on_demand["spec"]["template"]["spec"]["affinity"]["nodeAffinity"]
                                  ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"];
  CHECK(affinity[1]["values"] == nlohmann::json{"reserved", "on-demand"});
  CHECK(fs::exists(out / "ec2nodeclass-us-east-1.json"));

  const fs::path finetune = out / "llm-two-regions-finetune-us-east-1";
  const auto pool = read_json(finetune / "01-nodepool-spot.json");
  CHECK(pool["spec"]["limits"]["nvidia.com/gpu"] == "64");
  CHECK(pool["spec"]["disruption"]["consolidationPolicy"] == "WhenEmpty");
  CHECK_FALSE(fs::exists(finetune / "01-nodepool-reserved.json"));  // no on-demand base
}

TEST_CASE("kubernetes export keeps a workload name of any characters out of label values and image names", "[export]") {
  // Kubernetes, "Labels and Selectors": a label value is at most 63 characters, empty or beginning
  // and ending with an alphanumeric character, with '-', '_', '.' and alphanumerics between.
  const std::regex label_value("^(|[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)$");
  Plan plan = fixture_plan();
  for (PlannedGroup& group : plan.groups) group.workload = "Image api/it's \xc3\xbc " + group.workload;
  const fs::path out = fresh_out("kubernetes-workload-names");
  REQUIRE(export_plan(plan, ExportFormat::kubernetes, out).ok());
  std::size_t deployments = 0;
  for (const auto& entry : fs::recursive_directory_iterator(out)) {
    if (entry.path().extension() != ".json") continue;
    const nlohmann::json document = read_json(entry.path());
    // Every object's labels, and its pod template's.
    for (const char* path : {"/metadata/labels", "/spec/template/metadata/labels"}) {
      const nlohmann::json::json_pointer pointer(path);
      if (!document.contains(pointer)) continue;
      for (const auto& [key, value] : document.at(pointer).items()) {
        INFO(entry.path() << " " << key << ": " << value);
        CHECK(std::regex_match(value.get<std::string>(), label_value));
      }
    }
    if (document.value("kind", "") != "Deployment") continue;
    ++deployments;
    CHECK_THAT(document.at("metadata").at("annotations").at("fleetcast.io/workload").get<std::string>(),
               Catch::StartsWith("Image api/it's \xc3\xbc "));
    const std::string image = document.at(nlohmann::json::json_pointer("/spec/template/spec/containers/0/image"));
    CHECK_THAT(image, Catch::Contains("/image-api-it-s-") && Catch::EndsWith(":latest"));
  }
  CHECK(deployments > 0);
}

TEST_CASE("KEDA windows end a midnight hold on a month's last day in the next month", "[export]") {
  // Two days, Jan 31 and Feb 1, each at 5 replicas from 18:00 to midnight: the end "0 0 32 1 *"
  // would never fire, so Jan 31 gets its own window ending on February 1st.
  const Horizon horizon{*parse_instant("2027-01-31T00:00:00Z"), 2 * kDay, kHour};
  std::vector<int> floor(48, 1);
  for (std::size_t k = 18; k < 24; ++k) floor[k] = floor[k + 24] = 5;
  auto compressed = compress_schedule(floor, horizon, ScheduleLimits{4, true});
  REQUIRE(compressed.ok());
  auto windows = keda_windows(compressed->actions, horizon, 1, Seconds{0});
  REQUIRE(windows.ok());
  REQUIRE(windows->size() == 2);
  CHECK((*windows)[0] == CronWindow{"0 18 31 1 *", "0 0 1 2 *", 5, true});
  CHECK((*windows)[1] == CronWindow{"0 18 1 2 *", "0 0 2 2 *", 5, true});
  auto replayed = replay_keda_windows(*windows, horizon, 1, Seconds{0});
  REQUIRE(replayed.ok());
  CHECK(*replayed == floor);
}

TEST_CASE("KEDA windows end before a fall by the autoscaler's scale-down stabilization, and it holds the plan", "[export]") {
  // One day hourly from 2027-01-04 at 1 replica, 6 at 09:00, 8 at 10:00-11:00, 3 at 12:00-13:00.
  // The HPA keeps the highest recommendation over its 900 s stabilization window, and sees a
  // window's end within KEDA's 30 s polling: a window followed by a lower one ends at
  // fall - 900 s + 30 s, rounded up to a minute (12:00 -> 11:45:30 -> 11:46), and its replicas
  // fall at 12:01 (+-15 s), not 12:15. A window followed by a higher one ends where that opens.
  const Horizon horizon{*parse_instant("2027-01-04T00:00:00Z"), kDay, kHour};
  std::vector<int> floor(24, 1);
  floor[9] = 6;
  floor[10] = floor[11] = 8;
  floor[12] = floor[13] = 3;
  auto compressed = compress_schedule(floor, horizon, ScheduleLimits{10, false});
  REQUIRE(compressed.ok());
  auto windows = keda_windows(compressed->actions, horizon, 1, Seconds{900});
  REQUIRE(windows.ok());
  CHECK(*windows == std::vector<CronWindow>{{"0 9 4 1 *", "0 10 4 1 *", 6, false},
                                            {"0 10 4 1 *", "46 11 4 1 *", 8, false},
                                            {"0 12 4 1 *", "46 13 4 1 *", 3, false}});
  auto held = replay_keda_windows(*windows, horizon, 1, Seconds{900});
  REQUIRE(held.ok());
  CHECK(*held == floor);
  // Without the stabilization the same windows would leave 11:46-12:00 and 13:46-14:00 at 1.
  auto unheld = replay_keda_windows(*windows, horizon, 1, Seconds{0});
  REQUIRE(unheld.ok());
  CHECK((*unheld)[11] == 1);
  CHECK((*unheld)[13] == 1);

  // An hour's stabilization: 12:00 - 3600 s + 30 s -> 11:01 for the 8s; the 3s end at 13:01.
  windows = keda_windows(compressed->actions, horizon, 1, Seconds{3600});
  REQUIRE(windows.ok());
  CHECK((*windows)[1].end == "1 11 4 1 *");
  CHECK((*windows)[2].end == "1 13 4 1 *");
  held = replay_keda_windows(*windows, horizon, 1, Seconds{3600});
  REQUIRE(held.ok());
  CHECK(*held == floor);
}

TEST_CASE("a KEDA window shorter than the stabilization before a fall stays open a minute", "[export]") {
  // 5 replicas for 10 minutes from 09:00: 09:10 - 900 s + 30 s is before the window opens, so it
  // ends a minute after (09:01) and the HPA holds 5 until 09:16, past the plan's 09:10.
  const Horizon horizon{*parse_instant("2027-01-04T09:00:00Z"), kHour, Seconds{600}};
  const std::vector<ScheduleAction> actions{{*parse_instant("2027-01-04T09:00:00Z"), "", std::nullopt, 5},
                                            {*parse_instant("2027-01-04T09:10:00Z"), "", std::nullopt, 1}};
  auto windows = keda_windows(actions, horizon, 1, Seconds{900});
  REQUIRE(windows.ok());
  CHECK(*windows == std::vector<CronWindow>{{"0 9 4 1 *", "1 9 4 1 *", 5, false}});
  auto held = replay_keda_windows(*windows, horizon, 1, Seconds{900});
  REQUIRE(held.ok());
  CHECK(*held == std::vector<int>{5, 1, 1, 1, 1, 1});
}

TEST_CASE("KEDA holds a level of a year or more as consecutive date windows that never start where they end", "[export]") {
  // 400 days at 3 replicas from 2026-12-08 (KEDA's cron scaler: "Start and end should not be the
  // same"; a date window of exactly a year would be "0 0 8 12 *" to "0 0 8 12 *"). Pieces of 180
  // days: Dec 8 -> Jun 6 -> Dec 3 -> Jan 12, 2028.
  const Horizon horizon{*parse_instant("2026-12-07T00:00:00Z"), 401 * kDay, kDay};
  const std::vector<ScheduleAction> actions{{*parse_instant("2026-12-07T00:00:00Z"), "", std::nullopt, 1},
                                            {*parse_instant("2026-12-08T00:00:00Z"), "", std::nullopt, 3}};
  auto windows = keda_windows(actions, horizon, 1, Seconds{0});
  REQUIRE(windows.ok());
  REQUIRE(windows->size() == 3);
  CHECK((*windows)[0] == CronWindow{"0 0 8 12 *", "0 0 6 6 *", 3, false});
  CHECK((*windows)[1] == CronWindow{"0 0 6 6 *", "0 0 3 12 *", 3, false});
  CHECK((*windows)[2] == CronWindow{"0 0 3 12 *", "0 0 12 1 *", 3, false});
  for (const CronWindow& window : *windows) CHECK(window.start != window.end);
  auto replayed = replay_keda_windows(*windows, horizon, 1, Seconds{0});
  REQUIRE(replayed.ok());
  // Every day at 3, the first too: the last window's dates (Dec 3 - Jan 12) held a year earlier
  // as well, which is above the plan's 1 (dates recur every year; the export counts it as extra).
  CHECK(*replayed == std::vector<int>(401, 3));
}

TEST_CASE("kubernetes export refuses scale-in disabled where the schedule falls to other than zero; AWS takes it",
          "[export]") {
  // finetune runs 16 spot GPUs by night and 4 by day (pods of one GPU). An HPA with scale-down
  // disabled would keep the 16 all day; an Auto Scaling group's scheduled action
  // still lowers it, and its target tracking only stops scaling in.
  Plan plan = fixture_plan();
  PlannedGroup& finetune = plan.groups[2];
  REQUIRE(finetune.name == "llm-two-regions-finetune-us-east-1");
  finetune.target_tracking.disable_scale_in = true;
  const Status refused = render_export(plan, ExportFormat::kubernetes).status();
  CHECK(refused.code() == StatusCode::invalid_argument);
  CHECK_THAT(refused.message(),
             Catch::Contains("group 'llm-two-regions-finetune-us-east-1': target_tracking.disable_scale_in is true; false "
                             "where a capacity type's replicas fall to other than zero, as the spot ones do in interval 12 "
                             "(16 -> 4)"));
  const fs::path out = fresh_out("scale-in-disabled");
  REQUIRE(export_plan(plan, ExportFormat::aws, out).ok());
  CHECK(read_json(out / finetune.name / "04-put-scaling-policy.json")["TargetTrackingConfiguration"]["DisableScaleIn"] == true);
}

TEST_CASE("kubernetes export refuses a plan whose intervals start between whole minutes, saying why", "[export]") {
  Plan plan = fixture_plan();
  plan.horizon.start += Seconds{30};
  auto rendered = render_export(plan, ExportFormat::kubernetes);
  REQUIRE_FALSE(rendered.ok());
  CHECK(rendered.status().code() == StatusCode::invalid_argument);
  CHECK_THAT(rendered.status().message(), Catch::Contains("KEDA's cron triggers fire on whole minutes"));
  CHECK(render_export(plan, ExportFormat::aws).ok());  // StartTime takes seconds
}

TEST_CASE("kubernetes export shares max actions between a group's ScaledObjects and refuses more", "[export]") {
  // us-east-1 chat changes both its on-demand and its spot replicas: each needs a cron trigger at
  // least, so one action for the group cannot hold it; two can, one level each.
  ExportOptions options;
  options.max_actions = 1;
  const Status refused = render_export(fixture_plan(), ExportFormat::kubernetes, options).status();
  CHECK(refused.message().find("the plan breaks 1 Kubernetes limit") != std::string::npos);
  CHECK(refused.message().find("group '" + kEast + "': ScaledObject spec.triggers is 2 cron triggers in the group; at most 1 "
                              "per group (max actions); each of its 2 Deployments whose replicas change needs one at "
                              "the least") != std::string::npos);
  options.max_actions = 2;
  auto rendered = render_export(fixture_plan(), ExportFormat::kubernetes, options);
  REQUIRE(rendered.ok());
  for (const GroupExportSummary& group : rendered->groups) CHECK(group.actions <= 2);
  CHECK(rendered->groups[0].actions == 2);
}

TEST_CASE("write_export refuses a folder that is not empty and leaves it as it was", "[export]") {
  const fs::path out = fresh_out("occupied");
  fs::create_directories(out);
  std::ofstream(out / "mine.txt") << "keep";
  const Status status = write_export({ExportFile{"README.txt", "x"}}, out);
  CHECK(status.code() == StatusCode::failed_precondition);
  CHECK(status.message().find("exists and is not an empty folder") != std::string::npos);
  CHECK(fs::exists(out / "mine.txt"));
  CHECK_FALSE(fs::exists(out / "README.txt"));
  fs::remove_all(out);
}

TEST_CASE("write_export takes out/, out/. and an empty out/ as the folder out", "[export]") {
  const fs::path out = fresh_out("slash");
  for (const std::string suffix : {"/", "/.", "/./"}) {
    for (const bool empty_folder_first : {false, true}) {
      INFO("--out " << out.string() + suffix << (empty_folder_first ? " (an empty folder)" : ""));
      if (empty_folder_first) fs::create_directories(out);
      const Status status = write_export({ExportFile{"README.txt", "x"}}, out.string() + suffix);
      CHECK(status.ok());
      CHECK(fs::is_regular_file(out / "README.txt"));
      // Nothing but the folder beside it: no temporary left.
      CHECK(std::distance(fs::directory_iterator(out.parent_path()), fs::directory_iterator()) == 1);
      fs::remove_all(out);
    }
  }
}

TEST_CASE("no format writes outside --out, whatever group names and regions a plan file holds", "[export]") {
  // The planner names groups safely; a plan file edited by hand may name them anything.
  const fs::path out = fresh_out("escape");
  const fs::path outside = out.parent_path().parent_path() / "escaped";
  fs::remove_all(outside);
  Plan by_name = fixture_plan();
  by_name.groups.front().name = "../../escaped";
  Plan by_region = fixture_plan();
  for (PlannedGroup& group : by_region.groups) group.region = "../../escaped";
  for (PlannedPool& pool : by_region.pools) pool.region = "../../escaped";
  for (const Plan* plan : {&by_name, &by_region}) {
    for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
      // Refused, or written inside `out` (CloudFormation names no file after a group).
      const Status status = export_plan(*plan, format, out);
      INFO(export_format_name(format) << ": " << status.message());
      CHECK_FALSE(fs::exists(outside));
      if (!status.ok()) {
        CHECK(status.code() == StatusCode::invalid_argument);
        CHECK_FALSE(fs::exists(out));
      }
      fs::remove_all(out);
      CHECK(fs::is_empty(out.parent_path()));
    }
  }
  CHECK_THAT(export_plan(by_name, ExportFormat::aws, out).message(),
             Catch::Contains("export file '../../escaped/01-create-launch-template.json' would lie outside the export folder (--out)"));
  // A region that is no AWS region code is refused before any file is named after it.
  CHECK_THAT(export_plan(by_region, ExportFormat::cloudformation, out).message(),
             Catch::Contains("region is '../../escaped'; AWS region codes"));
  CHECK_FALSE(fs::exists(out));
}

TEST_CASE("every format of an AWS plan writes the requests buying its reservations, in order", "[export]") {
  Plan plan = fixture_plan();
  plan.commitments = two_reservations();
  const fs::path first = "commitments/01-p5.48xlarge-us-east-1";
  const fs::path second = "commitments/02-g6e.xlarge-us-west-2";
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    auto rendered = render_export(plan, format);
    REQUIRE(rendered.ok());
    CHECK(commitment_files(*rendered) == 4);
    CHECK(rendered->files.back().path == "README.txt");
    CHECK(rendered_json(*rendered, first / "01-describe-reserved-instances-offerings.json") ==
          describe_request("p5.48xlarge", "standard", "All Upfront", 94608000));
    // The cap on the order's upfront: 2 x $400,000.123456, rounded up to the cent.
    CHECK(rendered_json(*rendered, first / "02-purchase-reserved-instances-offering.json") ==
          nlohmann::json{{"ReservedInstancesOfferingId", "REPLACE-WITH-RESERVED-INSTANCES-OFFERING-ID"}, {"InstanceCount", 2},
                         {"LimitPrice", {{"Amount", 800000.25}, {"CurrencyCode", "USD"}}}});
    CHECK(rendered_json(*rendered, second / "01-describe-reserved-instances-offerings.json") ==
          describe_request("g6e.xlarge", "convertible", "No Upfront", 31536000));
    CHECK(rendered_json(*rendered, second / "02-purchase-reserved-instances-offering.json") ==
          nlohmann::json{{"ReservedInstancesOfferingId", "REPLACE-WITH-RESERVED-INSTANCES-OFFERING-ID"}, {"InstanceCount", 3}});

    const std::string& readme = rendered->files.back().contents;
    const std::string describe = "  aws ec2 describe-reserved-instances-offerings --region us-east-1 --cli-input-json "
                                 "file://commitments/01-p5.48xlarge-us-east-1/01-describe-reserved-instances-offerings.json\n";
    const std::string purchase = "  aws ec2 purchase-reserved-instances-offering --region us-east-1 --cli-input-json "
                                 "file://commitments/01-p5.48xlarge-us-east-1/02-purchase-reserved-instances-offering.json\n";
    REQUIRE(readme.find(describe) != std::string::npos);
    CHECK(readme.find(purchase) > readme.find(describe));
    CHECK(readme.find("01. 2 x p5.48xlarge in us-east-1: 3y standard all_upfront Reserved Instances") != std::string::npos);
    CHECK(readme.find("with ReservedInstancesOfferings[0].ReservedInstancesOfferingId of that reply") != std::string::npos);
    CHECK(readme.find("plan: upfront $800000.246912 for the order") != std::string::npos);
    CHECK(readme.find("plan: over 36 months: expected net saving $100000.000000 (p5 $-50000.000000, p95 $250000.000000), "
                      "breaking even in month 20") != std::string::npos);
    CHECK(readme.find("--region us-west-2 --cli-input-json file://commitments/02-g6e.xlarge-us-west-2/02-purchase") !=
          std::string::npos);
    CHECK(readme.find("plan: $1.500000 an hour per instance") != std::string::npos);
  }
}

TEST_CASE("every format of an AWS plan writes the requests buying its Savings Plans, dated as planned", "[export]") {
  Plan plan = fixture_plan();
  plan.commitments.clear();
  SavingsPlanRecommendation now;
  now.plan = SavingsPlan{SavingsPlanType::ec2_instance, "p5", "us-east-1", Money::from_usd(12.345), ReservationTerm::three_years,
                         UpfrontPayment::partial_upfront, plan.horizon.start};
  now.upfront = Money::from_usd(162213.3);
  now.reason = "covers it";
  SavingsPlanRecommendation later = now;
  later.plan.type = SavingsPlanType::compute;
  later.plan.family.clear();
  later.plan.region.clear();
  later.plan.payment = UpfrontPayment::no_upfront;
  later.plan.start = plan.horizon.start + 365 * kDay;
  SavingsPlanRecommendation renewal = later;
  renewal.plan.start = plan.horizon.start + plan.horizon.step;
  renewal.renews = "compute Savings Plan, $1.000000/h, 1y no_upfront";
  renewal.reason = "renews " + renewal.renews + " at its expiry";
  plan.savings_plans = {now, later, renewal};
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    auto rendered = render_export(plan, format);
    REQUIRE(rendered.ok());
    CHECK(commitment_files(*rendered) == 6);
    const fs::path first = "commitments/01-ec2instance-p5-us-east-1-savings-plan";
    CHECK(rendered_json(*rendered, first / "01-describe-savings-plans-offerings.json") ==
          nlohmann::json{{"productType", "EC2"},
                         {"planTypes", {"EC2Instance"}},
                         {"durations", {94608000}},
                         {"paymentOptions", {"Partial Upfront"}},
                         {"currencies", {"USD"}},
                         {"filters", {{{"name", "region"}, {"values", {"us-east-1"}}}, {{"name", "instanceFamily"}, {"values", {"p5"}}}}}});
    // Half of 26,280 h x $12.345 = $162,213.30, in whole dollars rounded up.
    CHECK(rendered_json(*rendered, first / "02-create-savings-plan.json") ==
          nlohmann::json{{"savingsPlanOfferingId", "REPLACE-WITH-SAVINGS-PLAN-OFFERING-ID"},
                         {"commitment", "12.345"},
                         {"upfrontPaymentAmount", "162214"}});
    // The ladder's later purchase is not queued (it is planned again then); the renewal is.
    CHECK(rendered_json(*rendered, "commitments/02-compute-savings-plan/02-create-savings-plan.json") ==
          nlohmann::json{{"savingsPlanOfferingId", "REPLACE-WITH-SAVINGS-PLAN-OFFERING-ID"}, {"commitment", "12.345"}});
    CHECK(rendered_json(*rendered, "commitments/03-compute-savings-plan/02-create-savings-plan.json")["purchaseTime"] ==
          format_instant(renewal.plan.start));
    CHECK_FALSE(rendered_json(*rendered, "commitments/02-compute-savings-plan/01-describe-savings-plans-offerings.json")
                    .contains("filters"));
    const std::string& readme = rendered->files.back().contents;
    CHECK(readme.find("01. ec2_instance Savings Plan for p5 in us-east-1, $12.345000/h, 3y partial_upfront\n"
                      "  aws savingsplans describe-savings-plans-offerings --region us-east-1 --cli-input-json "
                      "file://commitments/01-ec2instance-p5-us-east-1-savings-plan/01-describe-savings-plans-offerings.json\n"
                      "    then replace REPLACE-WITH-SAVINGS-PLAN-OFFERING-ID in 02-create-savings-plan.json with "
                      "searchResults[0].offeringId of that reply\n") != std::string::npos);
    CHECK(readme.find("plan: a ladder's later purchase: on " + format_instant(later.plan.start) + ", not before, plan again") !=
          std::string::npos);
    CHECK(readme.find("plan: queued for " + format_instant(renewal.plan.start) + " by its purchase time: it renews") !=
          std::string::npos);
  }
}

TEST_CASE("an upfront known only from an effective rate caps the purchase at the term valuation's upfront", "[export]") {
  Plan plan = fixture_plan();
  plan.commitments = {two_reservations().front()};
  plan.commitments[0].upfront_per_instance = Money{};  // the catalog's effective rate: upfront derived
  auto rendered = render_export(plan, ExportFormat::aws);
  REQUIRE(rendered.ok());
  const auto purchase =
      rendered_json(*rendered, "commitments/01-p5.48xlarge-us-east-1/02-purchase-reserved-instances-offering.json");
  CHECK(purchase["LimitPrice"]["Amount"] == 800000.25);
  CHECK(rendered->files.back().contents.find("(derived from the price source's effective rate)") != std::string::npos);
}

TEST_CASE("a renewal is bought at its date, and AWS's monthly quota counts the purchases of each month", "[export]") {
  Plan plan = fixture_plan();
  CommitmentRecommendation now = two_reservations().back();
  now.count = 20;
  CommitmentRecommendation renewal = now;
  renewal.count = 1;
  renewal.start = plan.horizon.start + plan.horizon.duration - plan.horizon.step;
  renewal.renews = "1 x g6e.xlarge in us-west-2, 1y convertible no_upfront";
  renewal.reason = "renews " + renewal.renews + " at its expiry";
  plan.commitments = {now, renewal};
  const std::string last = format_instant(renewal.start);
  REQUIRE(last.substr(0, 7) == format_instant(plan.horizon.start).substr(0, 7));
  auto rendered = render_export(plan, ExportFormat::aws);
  REQUIRE(rendered.ok());
  std::string readme = rendered->files.back().contents;
  CHECK(readme.find("plan: queued for " + last + " by its purchase time: it renews 1 x g6e.xlarge in us-west-2, 1y convertible "
                    "no_upfront at its expiry") != std::string::npos);
  // The renewal is queued for its date; the purchase made now is not.
  CHECK(rendered_json(*rendered, "commitments/02-g6e.xlarge-us-west-2/02-purchase-reserved-instances-offering.json")["PurchaseTime"] ==
        last);
  CHECK_FALSE(rendered_json(*rendered, "commitments/01-g6e.xlarge-us-west-2/02-purchase-reserved-instances-offering.json")
                  .contains("PurchaseTime"));
  // 21 in one Region and month: above AWS's default of 20 regional Reserved Instances a month.
  CHECK(readme.find("us-west-2, " + last.substr(0, 7) + ": 21 Reserved Instances, above AWS's default quota of 20") != std::string::npos);

  SECTION("the same 21 spread over two months are within it") {
    // The first day of the next month (past this one-day horizon: the count per month is what is checked).
    plan.commitments.back().start = parse_instant(last.substr(0, 7) + "-01T00:00:00Z").value() + 31 * kDay;
    rendered = render_export(plan, ExportFormat::aws);
    REQUIRE(rendered.ok());
    CHECK(rendered->files.back().contents.find("above AWS's default quota") == std::string::npos);
  }
}

TEST_CASE("a plan recommending no commitment, or not AWS's, writes no purchase requests", "[export]") {
  Plan plan = fixture_plan();
  plan.commitments.clear();
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    auto rendered = render_export(plan, format);
    REQUIRE(rendered.ok());
    CHECK(commitment_files(*rendered) == 0);
    CHECK(rendered->files.back().contents.find("No commitment is recommended: the plan buys no reservation and no Savings "
                                               "Plan.") != std::string::npos);
  }
  plan.commitments = two_reservations();
  for (PlannedPool& pool : plan.pools) pool.provider = "gcp";
  auto rendered = render_export(plan, ExportFormat::aws);
  REQUIRE(rendered.ok());
  CHECK(commitment_files(*rendered) == 0);
  CHECK(rendered->files.back().contents.find("Commitments to buy") == std::string::npos);
}

namespace {

// fixture_plan() with each pool's vCPUs as EC2 lists them: p5.48xlarge 192, p4de.24xlarge 96,
// g6e.xlarge 4, g6e.12xlarge 48; the us-east-1 chat group 22% on demand above its base.
Plan plan_with_vcpus() {
  Plan plan = fixture_plan();
  plan.groups.front().distribution.on_demand_percentage_above_base = 22;
  for (PlannedPool& pool : plan.pools) {
    pool.vcpus_per_instance = pool.instance_type == "p5.48xlarge"     ? 192
                              : pool.instance_type == "p4de.24xlarge" ? 96
                              : pool.instance_type == "g6e.xlarge"    ? 4
                                                                      : 48;
  }
  return plan;
}

const VcpuQuotaNeed& need_of(const RenderedExport& rendered, const std::string& region, bool spot, const std::string& quota) {
  const auto found = std::find_if(rendered.vcpu_quotas.begin(), rendered.vcpu_quotas.end(), [&](const VcpuQuotaNeed& need) {
    return need.region == region && need.spot == spot && need.quota == quota;
  });
  REQUIRE(found != rendered.vcpu_quotas.end());
  return *found;
}

// The busiest interval's vCPUs over the exported pools named, summed: the planned need, by brute force.
std::int64_t busiest(const Plan& exported, std::initializer_list<std::pair<std::size_t, int>> pools_and_vcpus) {
  std::int64_t most = 0;
  for (std::size_t k = 0; k < exported.instances.front().size(); ++k) {
    std::int64_t sum = 0;
    for (const auto& [pool, vcpus] : pools_and_vcpus) sum += std::int64_t{exported.instances[pool][k]} * vcpus;
    most = std::max(most, sum);
  }
  return most;
}

// Each quota's vCPUs at most, worked by hand for the format: (region, spot, quota) -> vCPUs.
using QuotaFigures = std::map<std::tuple<std::string, bool, std::string>, std::int64_t>;

void check_at_most(const RenderedExport& rendered, const QuotaFigures& expected) {
  CHECK(rendered.vcpu_quotas.size() == expected.size());
  for (const auto& [key, vcpus] : expected) {
    const auto& [region, spot, quota] = key;
    INFO(region << " " << quota);
    CHECK(need_of(rendered, region, spot, quota).max_vcpus == vcpus);
  }
}

}  // namespace

TEST_CASE("every format of an AWS plan says what it needs of EC2's vCPU quotas, per Region, family and kind", "[export]") {
  const Plan plan = plan_with_vcpus();
  const std::string p_on_demand = "Running On-Demand P instances", p4_spot = "All P4, P3 and P2 Spot Instance Requests",
                    p5_spot = "All P5 Spot Instance Requests", g_spot = "All G and VT Spot Instance Requests";
  // AWS, worked by hand from the groups' MaxSize and distribution. us-east-1 chat: 128 GPUs, a base
  // of 16 and 22% above it on demand: 16 + ceil(24.64) = 41 on demand, 87 spot, as p4de.24xlarge
  // (8 GPUs, 96 vCPUs) or p5.48xlarge (8, 192). Fine-tuning: 64 GPUs, all spot, as g6e.xlarge (1
  // GPU, 4 vCPUs) or g6e.12xlarge (4, 48): 768 against 256. us-west-2 chat: 48, a base of 8, 0% above.
  const QuotaFigures aws{{{"us-east-1", false, p_on_demand}, 6 * 192},  // ceil(41 / 8) p5.48xlarge
                         {{"us-east-1", true, p4_spot}, 11 * 96},       // ceil(87 / 8) p4de.24xlarge
                         {{"us-east-1", true, p5_spot}, 11 * 192},
                         {{"us-east-1", true, g_spot}, 16 * 48},
                         {{"us-west-2", false, p_on_demand}, 1 * 192},
                         {{"us-west-2", true, p5_spot}, 5 * 192}};
  // Kubernetes, from the NodePools' GPU limits: the on-demand kind's reserved NodePool (the base) and
  // on-demand NodePool (the maximum), the spot NodePool (the maximum). us-east-1 chat: 16 + 128 on
  // demand, 128 spot; fine-tuning: 64 spot; us-west-2 chat: 8 + 48 on demand, 48 spot.
  const QuotaFigures kubernetes{{{"us-east-1", false, p_on_demand}, 18 * 192},
                                {{"us-east-1", true, p4_spot}, 16 * 96},
                                {{"us-east-1", true, p5_spot}, 16 * 192},
                                {{"us-east-1", true, g_spot}, 16 * 48},
                                {{"us-west-2", false, p_on_demand}, 7 * 192},
                                {{"us-west-2", true, p5_spot}, 6 * 192}};
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation, ExportFormat::kubernetes}) {
    INFO(export_format_name(format));
    auto rendered = render_export(plan, format);
    REQUIRE(rendered.ok());
    check_at_most(*rendered, format == ExportFormat::kubernetes ? kubernetes : aws);
    CHECK(need_of(*rendered, "us-east-1", false, p_on_demand).instance_types ==
          std::vector<std::string>{"p4de.24xlarge", "p5.48xlarge"});
    // Planned: the busiest interval of the exported plan (pools 0-6 as in fixture_plan()).
    const Plan& exported = rendered->exported;
    const VcpuQuotaNeed& east_g = need_of(*rendered, "us-east-1", true, g_spot);
    CHECK(need_of(*rendered, "us-east-1", false, p_on_demand).planned_vcpus == busiest(exported, {{0, 192}}));
    CHECK(east_g.planned_vcpus == busiest(exported, {{5, 4}, {6, 48}}));
    CHECK(east_g.planned_vcpus > 0);
    for (const VcpuQuotaNeed& need : rendered->vcpu_quotas) {
      INFO(need.region << " " << need.quota);
      CHECK(need.complete);
      CHECK(need.planned_vcpus <= need.max_vcpus);
    }
    const std::string& readme = rendered_file(*rendered, "README.txt").contents;
    CHECK(readme.find("- us-east-1, All G and VT Spot Instance Requests (g6e.12xlarge, g6e.xlarge): " +
                      std::to_string(east_g.planned_vcpus) + " vCPUs planned, 768 at most\n    aws service-quotas "
                      "list-service-quotas --service-code ec2 --region us-east-1 --query \"Quotas[?QuotaName=="
                      "'All G and VT Spot Instance Requests'].Value\"\n") != std::string::npos);
    const nlohmann::json summary = nlohmann::json::parse(export_summary_json(*rendered, format, nullptr));
    CHECK(summary["vcpu_quotas"].size() == 6);
    CHECK(summary["vcpu_quotas"][0]["quota"] == p_on_demand);
    CHECK(summary["vcpu_quotas"][0]["kind"] == "on_demand");
    CHECK(summary["vcpu_quotas"][0]["max_vcpus"] == (format == ExportFormat::kubernetes ? 18 : 6) * 192);
  }
}

TEST_CASE("the vCPU quotas of an export say where a family's quota or a pool's vCPUs are not known", "[export]") {
  Plan plan = plan_with_vcpus();
  // The us-west-2 chat group on p6-b200.48xlarge, whose Spot quota the EC2 User Guide does not name;
  // the fine-tuning pools as a plan document written before vCPUs were recorded holds them.
  for (PlannedPool& pool : plan.pools) {
    if (pool.region == "us-west-2") pool.instance_type = "p6-b200.48xlarge";
    if (pool.instance_type.starts_with("g6e")) pool.vcpus_per_instance = 0;
  }
  for (PlannedGroup& group : plan.groups) {
    if (group.region == "us-west-2") group.instance_types = {{"p6-b200.48xlarge", 8}};
  }
  auto rendered = render_export(plan, ExportFormat::aws);
  REQUIRE(rendered.ok());
  const VcpuQuotaNeed& unnamed = need_of(*rendered, "us-west-2", true, "");
  CHECK(unnamed.instance_types == std::vector<std::string>{"p6-b200.48xlarge"});
  CHECK(unnamed.max_vcpus == 5 * 192);
  CHECK(need_of(*rendered, "us-west-2", false, "Running On-Demand P instances").complete);
  CHECK_FALSE(need_of(*rendered, "us-east-1", true, "All G and VT Spot Instance Requests").complete);
  const std::string& readme = rendered_file(*rendered, "README.txt").contents;
  CHECK(readme.find("- us-west-2, Spot quota of p6-b200.48xlarge: ") != std::string::npos);
  CHECK(readme.find("the EC2 User Guide names no quota for these") != std::string::npos);
  CHECK(readme.find("(some types' vCPUs unknown: re-plan to count them)") != std::string::npos);
}

TEST_CASE("an export counts each family under its EC2 User Guide quota, on demand and as spot", "[export]") {
  for (const auto& [type, on_demand, spot] :
       {std::tuple<std::string, std::string, std::string>{"inf2.48xlarge", "Running On-Demand Inf instances", "All Inf Spot Instance Requests"},
        {"trn1.32xlarge", "Running On-Demand Trn instances", "All Trn Spot Instance Requests"},
        {"dl2q.24xlarge", "Running On-Demand DL instances", "All DL Spot Instance Requests"},
        {"gr6.8xlarge", "Running On-Demand G and VT instances", "All G and VT Spot Instance Requests"},
        {"p3dn.24xlarge", "Running On-Demand P instances", "All P4, P3 and P2 Spot Instance Requests"},
        {"p5en.48xlarge", "Running On-Demand P instances", "All P5 Spot Instance Requests"},
        {"m7i.48xlarge", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
         "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests"}}) {
    INFO(type);
    Plan plan = plan_with_vcpus();
    for (PlannedPool& pool : plan.pools) {
      if (pool.region == "us-west-2") pool.instance_type = type;
    }
    plan.groups[1].instance_types = {{type, 8}};
    auto rendered = render_export(plan, ExportFormat::aws);
    REQUIRE(rendered.ok());
    CHECK(need_of(*rendered, "us-west-2", false, on_demand).instance_types == std::vector<std::string>{type});
    CHECK(need_of(*rendered, "us-west-2", true, spot).instance_types == std::vector<std::string>{type});
  }
}

TEST_CASE("an export of another provider's plan lists no EC2 vCPU quota", "[export]") {
  Plan plan = plan_with_vcpus();
  for (PlannedPool& pool : plan.pools) pool.provider = "gcp";
  auto rendered = render_export(plan, ExportFormat::kubernetes);
  REQUIRE(rendered.ok());
  CHECK(rendered->vcpu_quotas.empty());
  CHECK(rendered_file(*rendered, "README.txt").contents.find("EC2 vCPU quotas") == std::string::npos);
}

TEST_CASE("an export's vCPUs at most are never below the plan's own peak where its mix runs more on demand", "[export]") {
  Plan plan = plan_with_vcpus();
  // The us-west-2 chat group's distribution gives on demand nothing (no base, 0% above), while the
  // plan runs one p5.48xlarge on demand there at its peak (pool 3 of fixture_plan()).
  PlannedGroup& west = plan.groups[1];
  REQUIRE(west.region == "us-west-2");
  west.distribution.on_demand_base_capacity = 0;
  auto rendered = render_export(plan, ExportFormat::aws);
  REQUIRE(rendered.ok());
  const VcpuQuotaNeed& on_demand = need_of(*rendered, "us-west-2", false, "Running On-Demand P instances");
  CHECK(on_demand.planned_vcpus == 192);
  CHECK(on_demand.max_vcpus == 192);
  // Spot at most: all 48 GPUs, 6 p5.48xlarge.
  CHECK(need_of(*rendered, "us-west-2", true, "All P5 Spot Instance Requests").max_vcpus == 6 * 192);
}

namespace {

// fixture_plan() with one group alone: us-east-1 chat on p5.48xlarge on demand (pool 0, $98.32 an
// hour), p5.48xlarge spot (pool 1, $39.75) and p4de.24xlarge spot (pool 2, $16.20), all 8 GPUs an
// instance; a base of 16 GPUs and 50% above it on demand. Per interval, instances of pools 0/1/2:
// 3/1/0, 4/0/1, 5/1/0, 2/2/2, then 2/0/0 to the end; the schedule states what they hold.
Plan plan_with_a_varying_mix() {
  Plan plan = fixture_plan();
  PlannedGroup group = plan.groups.front();
  group.pools = {0, 1, 2};
  group.instance_types = {{"p5.48xlarge", 8}, {"p4de.24xlarge", 8}};
  group.distribution.on_demand_base_capacity = 16;
  group.distribution.on_demand_percentage_above_base = 50;
  group.min_capacity = 16;
  group.max_capacity = 64;
  group.launch_lead = Seconds{0};
  const auto intervals = static_cast<std::size_t>(plan.horizon.intervals());
  group.instances.assign(3, std::vector<int>(intervals, 0));
  const int mix[4][3] = {{3, 1, 0}, {4, 0, 1}, {5, 1, 0}, {2, 2, 2}};
  for (std::size_t k = 0; k < intervals; ++k) {
    for (std::size_t i = 0; i < 3; ++i) group.instances[i][k] = k < 4 ? mix[k][i] : (i == 0 ? 2 : 0);
  }
  group.schedule.clear();
  int previous = -1;
  for (std::size_t k = 0; k < intervals; ++k) {
    const int gpus = 8 * (group.instances[0][k] + group.instances[1][k] + group.instances[2][k]);
    if (gpus != previous) group.schedule.push_back({plan.horizon.start + plan.horizon.step * static_cast<std::int64_t>(k), 16, 64, gpus});
    previous = gpus;
  }
  plan.groups = {group};
  return plan;
}

}  // namespace

TEST_CASE("an AWS export runs each interval's on-demand share as its InstancesDistribution splits it", "[export]") {
  const Plan plan = plan_with_a_varying_mix();
  REQUIRE(check_plan_groups(plan).ok());
  for (const ExportFormat format : {ExportFormat::aws, ExportFormat::cloudformation}) {
    INFO(export_format_name(format));
    auto rendered = render_export(plan, format);
    INFO((rendered.ok() ? std::string() : rendered.status().message()));
    REQUIRE(rendered.ok());
    const PlannedGroup& exported = rendered->exported.groups.at(0);
    CHECK(rendered->groups.at(0).extra_gpu_hours == 0);  // 5 changes: exported as planned
    // AWS runs 16 + ceil(50% of the rest) on demand: 24 of 32, 28 of 40, 32 of 48, 32 of 48, 16 of 16.
    // 0: 24 as planned. 1: 4 too many, less than one instance: kept. 2: 8 too many, one p5 on
    // demand becomes one p5 spot. 3: 16 too few: the dearer spot per GPU (p5, $4.97 against
    // p4de's $2.03) gives both its instances to p5 on demand.
    const std::vector<std::vector<int>> expected = {{3, 1, 0}, {4, 0, 1}, {4, 2, 0}, {4, 0, 2}, {2, 0, 0}};
    for (std::size_t k = 0; k < expected.size(); ++k) {
      for (std::size_t i = 0; i < 3; ++i) {
        INFO("interval " << k << ", pool " << plan.pools[exported.pools[i]].name);
        CHECK(exported.instances[i][k] == expected[k][i]);
      }
    }
    for (std::size_t k = expected.size(); k < exported.instances[0].size(); ++k) CHECK(exported.instances[0][k] == 2);
    CHECK(check_plan_groups(rendered->exported).ok());
    const GroupExportSummary& summary = rendered->groups.at(0);
    CHECK(summary.gpu_hours_moved_to_spot == 8.0);
    CHECK(summary.gpu_hours_moved_to_on_demand == 16.0);
    // At most: the added instance-hours at the group's dearest per-GPU rate, $98.32 an instance:
    // one p5 spot hour and two p5 on-demand hours.
    CHECK(summary.split_cost == Money::from_usd(3 * 98.32));
    const nlohmann::json document = nlohmann::json::parse(export_summary_json(*rendered, format, nullptr));
    CHECK(document["groups"][0]["gpu_hours_moved_to_spot"] == 8.0);
    CHECK(document["groups"][0]["split_cost_usd"].get<double>() == Approx(294.96));
  }
  // Kubernetes holds each capacity type's replicas in its own Deployment: the plan's mix.
  auto rendered = render_export(plan, ExportFormat::kubernetes);
  REQUIRE(rendered.ok());
  CHECK(rendered->exported.groups.at(0).instances == plan.groups.at(0).instances);
  CHECK(rendered->groups.at(0).gpu_hours_moved_to_spot == 0);
  CHECK(rendered->groups.at(0).gpu_hours_moved_to_on_demand == 0);
}

TEST_CASE("an AWS export moves capacity to the other purchase kind of another type where the group lacks the type there",
          "[export]") {
  // Without the p5 spot pool, interval 2's p5 on demand goes to p4de spot, which holds 8 GPUs for
  // $16.20; interval 3's p4de spot moves to p5 on demand, the group's only on-demand pool.
  Plan plan = plan_with_a_varying_mix();
  PlannedGroup& group = plan.groups.front();
  for (std::size_t k = 0; k < group.instances[0].size(); ++k) {
    group.instances[2][k] += group.instances[1][k];  // p5 spot's instances as p4de spot: same GPUs
  }
  group.pools = {0, 2};
  group.instances.erase(group.instances.begin() + 1);
  REQUIRE(check_plan_groups(plan).ok());
  auto rendered = render_export(plan, ExportFormat::aws);
  REQUIRE(rendered.ok());
  const PlannedGroup& exported = rendered->exported.groups.at(0);
  const std::vector<std::vector<int>> expected = {{3, 1}, {4, 1}, {4, 2}, {4, 2}};
  for (std::size_t k = 0; k < expected.size(); ++k) {
    INFO("interval " << k);
    CHECK(exported.instances[0][k] == expected[k][0]);
    CHECK(exported.instances[1][k] == expected[k][1]);
  }
  CHECK(rendered->groups.at(0).gpu_hours_moved_to_spot == 8.0);
  CHECK(rendered->groups.at(0).gpu_hours_moved_to_on_demand == 16.0);
}
