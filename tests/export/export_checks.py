"""Shared helpers of the export checks run by ctest: running `fleetcast export`, reporting a skip,
validating requests with botocore, checking the requests that buy a plan's commitments, and
comparing what a client read back with what was sent."""
import datetime
import functools
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77  # ctest SKIP_RETURN_CODE


def skip(reason):
    print(f"SKIPPED: {reason}")
    sys.exit(SKIP)


def require_modules(*names, install="pip install awscli boto3 'moto[server]' cfn-lint"):
    missing = [name for name in names if importlib.util.find_spec(name) is None]
    if missing:
        skip(f"python modules {', '.join(missing)} missing for {sys.executable} (install: {install})")


def require_programs(*names, install="pip install awscli boto3 'moto[server]' cfn-lint"):
    missing = [name for name in names if shutil.which(name) is None]
    if missing:
        skip(f"{', '.join(missing)} not found on PATH (install: {install})")


def fail(message):
    print(f"FAILED: {message}")
    sys.exit(1)


def export(fleetcast, plan, export_format, parent):
    """Runs `fleetcast export` into a new folder under `parent` and returns it."""
    out = os.path.join(parent, export_format)
    result = subprocess.run([fleetcast, "export", plan, "--format", export_format, "--out", out],
                            capture_output=True, text=True, check=False)
    if result.returncode != 0:
        fail(f"fleetcast export --format {export_format} exited {result.returncode}: {result.stderr}")
    return out


def scratch():
    return tempfile.TemporaryDirectory(prefix="fleetcast-export-")


def json_files(folder):
    return sorted(os.path.join(root, name) for root, _, names in os.walk(folder)
                  for name in names if name.endswith(".json"))


# A README.txt line giving a request file's exact command.
COMMAND = re.compile(r"^  aws (\S+) (\S+) --region (\S+) --cli-input-json file://(\S+)$")


@functools.lru_cache(maxsize=None)
def service_model(service):
    import botocore.session
    return botocore.session.get_session().get_service_model(service)


def validation_errors(service, operation, params):
    """(the operation's name in botocore's model, botocore's report refusing `params` as its input
    or "") for `aws SERVICE OPERATION` (the CLI's names)."""
    import botocore
    from botocore.exceptions import ParamValidationError
    from botocore.validate import validate_parameters
    model = service_model(service)
    names = [name for name in model.operation_names if botocore.xform_name(name, "-") == operation]
    if len(names) != 1:
        fail(f"'{service} {operation}' is not an operation of botocore's model")
    try:
        validate_parameters(params, model.operation_model(names[0]).input_shape)
    except ParamValidationError as error:
        return names[0], str(error)
    return names[0], ""


def validate(service, operation, params, where):
    """Fails unless botocore's own validator takes `params`; returns the operation's model name."""
    name, errors = validation_errors(service, operation, params)
    if errors:
        fail(f"{where}: botocore's validator refuses the request:\n{errors}")
    return name


# ---- the requests buying a plan's commitments: commitments/ in every format of an AWS plan ----

COMMITMENTS = "commitments"
OFFERING_PLACEHOLDER = "REPLACE-WITH-RESERVED-INSTANCES-OFFERING-ID"
OFFERING_ID_FIELD = "ReservedInstancesOfferings[0].ReservedInstancesOfferingId"
SAVINGS_PLAN_PLACEHOLDER = "REPLACE-WITH-SAVINGS-PLAN-OFFERING-ID"
SAVINGS_PLAN_ID_FIELD = "searchResults[0].offeringId"
TERM_SECONDS = {"1y": 31536000, "3y": 94608000}
OFFERING_TYPES = {"no_upfront": "No Upfront", "partial_upfront": "Partial Upfront", "all_upfront": "All Upfront"}
PLAN_TYPES = {"compute": "Compute", "ec2_instance": "EC2Instance"}
# What every describe request pins besides the plan's terms: AWS's own regional Linux offering.
DESCRIBE_FIXED = {"ProductDescription": "Linux/UNIX", "InstanceTenancy": "default", "IncludeMarketplace": False,
                  "Filters": [{"Name": "scope", "Values": ["Region"]}]}
# The Savings Plans API has one endpoint, in us-east-1 (its service model's endpoint rules).
SAVINGS_PLANS_REGION = "us-east-1"
# CreateSavingsPlan's documented bounds (Savings Plans API Reference, botocore's model): commitment
# "between 0.001 and 1 million", at most five decimals; upfrontPaymentAmount "a whole number
# between 50 and 99 percent of the total value", Partial Upfront only.
COMMITMENT_RANGE = (0.001, 1_000_000)
UPFRONT_SHARE_RANGE = (0.50, 0.99)
# PurchaseReservedInstancesOffering's PurchaseTime and CreateSavingsPlan's purchaseTime queue a
# purchase; AWS keeps a queued purchase up to three years (EC2 User Guide, "Buy Reserved Instances").
LATEST_QUEUED = datetime.timedelta(days=3 * 365)


def format_files(folder):
    """The format's own JSON documents: those outside commitments/."""
    return [path for path in json_files(folder)
            if not os.path.relpath(path, folder).startswith(COMMITMENTS + os.sep)]


def aws_plan(plan):
    return bool(plan["pools"]) and all(pool["provider"] == "aws" for pool in plan["pools"])


def planned_limit(commitment):
    """The LimitPrice.Amount the purchase must carry: the plan's upfront for the whole order (the
    offer's upfront times the count or, where the plan's price source gave an effective rate only,
    the upfront its term valuation derived) in USD, rounded up to whole cents; None without one."""
    if commitment["payment"] == "no_upfront":
        return None
    micro = round(commitment["upfront_per_instance_usd"] * 1e6) * commitment["count"]
    if micro == 0:
        micro = round(commitment.get("term_valuation", {}).get("upfront_cash_usd", 0) * 1e6)
    return -(-micro // 10_000) / 100 if micro else None


def queued_time(start, renews):
    """A renewal is queued for its date; every other purchase (now, or a ladder's later one made
    after planning again) carries no purchase time."""
    return start if renews else None


def planned_purchase(commitment, horizon_start):
    return ("reservation", commitment["region"], commitment["instance_type"], commitment["count"],
            TERM_SECONDS[commitment["term"]], commitment["offering_class"], OFFERING_TYPES[commitment["payment"]],
            planned_limit(commitment), queued_time(commitment.get("start", horizon_start), commitment.get("renews")))


def planned_savings_plan(bought):
    """A recommended Savings Plan in exported_savings_plan's terms, derived from the plan alone:
    the commitment with three decimals, and for Partial Upfront half the term's total commitment in
    whole dollars rounded up."""
    plan = bought["plan"]
    thousandths = round(plan["hourly_commitment_usd"] * 1000)
    upfront = None
    if plan["payment"] == "partial_upfront":
        hours = TERM_SECONDS[plan["term"]] // 3600
        half_micro = -(-thousandths * 1000 * hours // 2)
        upfront = str(-(-half_micro // 1_000_000))
    return ("savings_plan", SAVINGS_PLANS_REGION, PLAN_TYPES[plan["type"]], plan.get("family"), plan.get("region"),
            TERM_SECONDS[plan["term"]], OFFERING_TYPES[plan["payment"]], f"{thousandths // 1000}.{thousandths % 1000:03d}",
            upfront, queued_time(plan["start"], bought.get("renews")))


def exported_purchase(where, region, describe, purchase):
    """The purchase as the two requests of one commitments/ folder make it, in planned_purchase's terms."""
    fixed = {key: describe.get(key) for key in DESCRIBE_FIXED}
    if fixed != DESCRIBE_FIXED or describe["MinDuration"] != describe["MaxDuration"]:
        fail(f"{where}: the describe request does not pin AWS's regional Linux offering of one term: {describe}")
    if purchase["ReservedInstancesOfferingId"] != OFFERING_PLACEHOLDER:
        fail(f"{where}: the purchase names {purchase['ReservedInstancesOfferingId']!r}, not the placeholder")
    limit = purchase.get("LimitPrice")
    if limit is not None and limit.get("CurrencyCode") != "USD":
        fail(f"{where}: LimitPrice {limit} is not in USD")
    return ("reservation", region, describe["InstanceType"], purchase["InstanceCount"], describe["MinDuration"],
            describe["OfferingClass"], describe["OfferingType"], limit["Amount"] if limit is not None else None,
            purchase.get("PurchaseTime"))


def exported_savings_plan(where, region, describe, create):
    """The Savings Plan the two requests of one commitments/ folder buy, in planned_savings_plan's
    terms, after checking AWS's documented bounds on them."""
    if describe.get("productType") != "EC2" or describe.get("currencies") != ["USD"] or \
            any(len(describe.get(key, [])) != 1 for key in ("planTypes", "durations", "paymentOptions")):
        fail(f"{where}: the describe request does not pin one EC2 offering in USD: {describe}")
    filters = {item["name"]: item["values"] for item in describe.get("filters", [])}
    if describe["planTypes"] == ["EC2Instance"] and (len(filters.get("region", [])) != 1 or len(filters.get("instanceFamily", [])) != 1):
        fail(f"{where}: an EC2 Instance plan's describe request does not pin one family and region: {describe}")
    if create["savingsPlanOfferingId"] != SAVINGS_PLAN_PLACEHOLDER:
        fail(f"{where}: the purchase names {create['savingsPlanOfferingId']!r}, not the placeholder")
    commitment = create["commitment"]
    decimals = commitment.split(".")[1] if "." in commitment else ""
    if not COMMITMENT_RANGE[0] <= float(commitment) <= COMMITMENT_RANGE[1] or len(decimals) > 5:
        fail(f"{where}: commitment {commitment!r} is outside AWS's 0.001 to 1 million with at most five decimals")
    upfront = create.get("upfrontPaymentAmount")
    if (upfront is not None) != (describe["paymentOptions"] == ["Partial Upfront"]):
        fail(f"{where}: upfrontPaymentAmount {upfront!r} with payment {describe['paymentOptions']}")
    if upfront is not None:
        total = float(commitment) * describe["durations"][0] / 3600
        if not upfront.isdigit() or not UPFRONT_SHARE_RANGE[0] * total <= int(upfront) <= UPFRONT_SHARE_RANGE[1] * total:
            fail(f"{where}: upfrontPaymentAmount {upfront!r} is not a whole number between 50% and 99% of {total}")
    return ("savings_plan", region, describe["planTypes"][0], (filters.get("instanceFamily") or [None])[0],
            (filters.get("region") or [None])[0], describe["durations"][0], describe["paymentOptions"][0], commitment,
            upfront, create.get("purchaseTime"))


def commitment_commands(folder):
    """README.txt's text and its commands on commitments/ files, in its order; fails unless they
    name every such file exactly once."""
    with open(os.path.join(folder, "README.txt"), encoding="utf-8") as readme:
        text = readme.read()
    commands = [match.groups() for match in map(COMMAND.match, text.splitlines())
                if match and match.group(4).startswith(COMMITMENTS + "/")]
    files = sorted(os.path.relpath(path, folder) for path in json_files(os.path.join(folder, COMMITMENTS)))
    if sorted(command[3] for command in commands) != files:
        fail(f"README.txt does not name every file under {COMMITMENTS}/ exactly once: {files}")
    return text, commands


def check_misspelling_refused(service, operation, purchase, field):
    """The validator is not lenient: the same purchase with `field` misspelled is refused."""
    misspelled = {(field[:-1] if key == field else key): value for key, value in purchase.items()}
    if not validation_errors(service, operation, misspelled)[1]:
        fail(f"botocore's validator took a {operation} request with {field} misspelled")


# Per kind of commitment: the two calls of a folder, how to read them, and a field to misspell.
PURCHASE_KINDS = {
    ("DescribeReservedInstancesOfferings", "PurchaseReservedInstancesOffering"):
        (exported_purchase, ("ec2", "purchase-reserved-instances-offering", "InstanceCount")),
    ("DescribeSavingsPlansOfferings", "CreateSavingsPlan"):
        (exported_savings_plan, ("savingsplans", "create-savings-plan", "commitment")),
}


def check_queued(where, purchase, horizon_start):
    """A queued purchase's time lies from the horizon's start up to three years after it."""
    queued = purchase[-1]
    if queued is not None and not parse_instant(horizon_start) <= parse_instant(queued) <= parse_instant(horizon_start) + LATEST_QUEUED:
        fail(f"{where}: purchase time {queued} is not within three years of the plan's start {horizon_start}")


def check_commitments(folder, plan):
    """Every request under commitments/ passes botocore's validator for its operation; per folder,
    README.txt runs a describe call then the purchase of one kind (reservations: EC2; Savings Plans:
    the Savings Plans API) in one region; the purchases are exactly the plan's commitments
    (reservations: instance type, region, count, term, class, payment, LimitPrice; Savings Plans:
    type, family, region, term, payment, commitment, upfrontPaymentAmount), renewals queued for
    their date and nothing else queued, for an AWS plan, none otherwise; a ladder's later purchase
    is marked in README.txt to be planned again; and botocore refuses a purchase with a misspelled
    field. Returns a line saying what was checked."""
    text, commands = commitment_commands(folder)
    requests = {}
    for service, operation, region, path in commands:
        with open(os.path.join(folder, path), encoding="utf-8") as request_file:
            request = json.load(request_file)
        name = validate(service, operation, request, path)
        requests.setdefault(os.path.dirname(path), []).append((name, region, request))
    horizon_start = plan["horizon"]["start"]
    exported, misspell = [], []
    for where, calls in requests.items():
        kind = PURCHASE_KINDS.get(tuple(call[0] for call in calls))
        if kind is None or calls[0][1] != calls[1][1]:
            fail(f"{where}: README.txt does not describe then purchase in one region: {[call[:2] for call in calls]}")
        exported.append(kind[0](where, calls[0][1], calls[0][2], calls[1][2]))
        check_queued(where, exported[-1], horizon_start)
        misspell.append((*kind[1], calls[1][2]))
    expected = []
    if aws_plan(plan):
        expected = [planned_purchase(commitment, horizon_start) for commitment in plan["commitments"]]
        expected += [planned_savings_plan(bought) for bought in plan.get("savings_plans", [])]
    if sorted(exported, key=repr) != sorted(expected, key=repr):
        fail(f"the purchase requests buy {sorted(exported, key=repr)}, the plan recommends {sorted(expected, key=repr)}")
    later = [c for c in plan["commitments"] if c.get("start", horizon_start) != horizon_start and not c.get("renews")]
    later += [b for b in plan.get("savings_plans", []) if b["plan"]["start"] != horizon_start and not b.get("renews")]
    if later and text.count("a ladder's later purchase: on ") != len(later):
        fail(f"README.txt does not mark each of the {len(later)} ladder purchases to be planned again on its date")
    if not expected:
        if aws_plan(plan) and "No commitment is recommended" not in text:
            fail("README.txt does not say that no commitment is recommended")
        return f"no commitment to buy{'' if aws_plan(plan) else ' (not an AWS plan)'}, no purchase request written"
    for service, operation, field, request in {m[1]: m for m in misspell}.values():
        placeholder, id_field = ((SAVINGS_PLAN_PLACEHOLDER, SAVINGS_PLAN_ID_FIELD) if service == "savingsplans"
                                 else (OFFERING_PLACEHOLDER, OFFERING_ID_FIELD))
        if placeholder not in text or id_field not in text:
            fail(f"README.txt does not say to replace {placeholder} with {id_field}")
        check_misspelling_refused(service, operation, request, field)
    return (f"{len(commands)} commitment requests pass botocore's validator and buy exactly the plan's "
            f"{len(exported)} commitment(s) ({len(later)} a ladder's later purchase); a misspelled purchase is refused")


class Comparison:
    """Compares sent values with those read back: every field sent must come back equal (the
    reply may hold more). Timestamps compare as instants."""

    def __init__(self):
        self.fields = 0
        self.mismatches = []

    def same(self, sent, got, where):
        if isinstance(sent, dict):
            if not isinstance(got, dict):
                self.mismatches.append(f"{where}: sent an object, read back {got!r}")
                return
            for key, value in sent.items():
                if key not in got:
                    self.mismatches.append(f"{where}.{key}: sent {value!r}, not read back")
                else:
                    self.same(value, got[key], f"{where}.{key}")
        elif isinstance(sent, list):
            if not isinstance(got, list) or len(got) != len(sent):
                self.mismatches.append(f"{where}: sent {len(sent)} elements, read back {got!r}")
                return
            for index, (one, other) in enumerate(zip(sent, got)):
                self.same(one, other, f"{where}[{index}]")
        else:
            self.fields += 1
            if isinstance(got, datetime.datetime):
                got = got.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
            if sent != got:
                self.mismatches.append(f"{where}: sent {sent!r}, read back {got!r}")


# ---- an independent replay of scheduled actions, as AWS applies them ----

AWS_MAX_ACTIONS_PER_GROUP = 125  # "Quotas for Auto Scaling resources and groups": fixed, cannot be raised


def parse_instant(text):
    if isinstance(text, datetime.datetime):
        return text.astimezone(datetime.timezone.utc)
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)


def parse_duration(text):
    """fleetcast durations as plan documents write them: "1h", "30d", "1h30m", "5m"."""
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    total, number = 0, ""
    for char in text:
        if char.isdigit():
            number += char
        else:
            total += int(number) * units[char]
            number = ""
    return datetime.timedelta(seconds=total)


def cron_field(text, low, high):
    """The values a cron field allows: '*', 'n', 'a-b', with '/step', comma-separated."""
    values = set()
    for part in text.split(","):
        body, _, step = part.partition("/")
        if body == "*":
            first, last = low, high
        elif "-" in body:
            first, last = (int(value) for value in body.split("-"))
        else:
            first = last = int(body)
        values.update(range(first, last + 1, int(step) if step else 1))
    return values


class Cron:
    """A five-field cron expression (UTC), matched minute by minute."""

    def __init__(self, text):
        minute, hour, day, month, weekday = text.split()
        self.minutes, self.hours = cron_field(minute, 0, 59), cron_field(hour, 0, 23)
        self.days, self.months = cron_field(day, 1, 31), cron_field(month, 1, 12)
        self.weekdays = {value % 7 for value in cron_field(weekday, 0, 7)}
        self.any_day, self.any_weekday = day == "*", weekday == "*"

    def matches(self, at):
        if at.minute not in self.minutes or at.hour not in self.hours or at.month not in self.months:
            return False
        day_ok, weekday_ok = at.day in self.days, (at.isoweekday() % 7) in self.weekdays
        if self.any_day or self.any_weekday:
            return day_ok and weekday_ok
        return day_ok or weekday_ok


def action_firings(action, horizon_end):
    """(instant, capacity) of every firing of one AWS scheduled action before `horizon_end`: at
    StartTime, then at each cron match after it up to EndTime."""
    start = parse_instant(action["StartTime"])
    capacity = action["DesiredCapacity"]
    firings = [(start, capacity)]
    if action.get("Recurrence"):
        if action.get("TimeZone") not in (None, "UTC", "Etc/UTC"):
            fail(f"{action.get('ScheduledActionName')}: replay handles UTC only, found {action['TimeZone']}")
        cron = Cron(action["Recurrence"])
        end = min(parse_instant(action["EndTime"]), horizon_end) if action.get("EndTime") else horizon_end
        at = start.replace(second=0) + datetime.timedelta(minutes=1)
        while at <= end and at < horizon_end:
            if cron.matches(at):
                firings.append((at, capacity))
            at += datetime.timedelta(minutes=1)
    return firings


def sorted_firings(actions, horizon):
    start, step, intervals = horizon
    return sorted((firing for action in actions for firing in action_firings(action, start + step * intervals)),
                  key=lambda firing: firing[0])


def lowest_between(firings, initial, begin, end):
    """The lowest capacity in force during [begin, end): the latest firing at or before `begin`,
    then every firing before `end`."""
    lowest = initial
    for at, capacity in firings:
        if at > begin:
            if at >= end:
                break
            lowest = min(lowest, capacity)
        else:
            lowest = capacity
    return lowest


def replay(actions, horizon, initial):
    """Capacity per interval of `horizon` (start, step, intervals): the latest firing at or before
    the interval's start, or the lowest value set during the interval."""
    start, step, intervals = horizon
    firings = sorted_firings(actions, horizon)
    capacity, current, index = [], initial, 0
    for k in range(intervals):
        begin = start + step * k
        while index < len(firings) and firings[index][0] <= begin:
            current = firings[index][1]
            index += 1
        lowest = current
        while index < len(firings) and firings[index][0] < begin + step:
            current = firings[index][1]
            lowest = min(lowest, current)
            index += 1
        capacity.append(lowest)
    return capacity


def plan_horizon(plan):
    step = parse_duration(plan["horizon"]["step"])
    intervals = int(parse_duration(plan["horizon"]["duration"]) / step)
    return parse_instant(plan["horizon"]["start"]), step, intervals


def planned_gpus(plan, group):
    """The GPUs the plan runs in `group` per interval: its pools' instances when the document has
    them per group, else its schedule's desired capacity."""
    start, step, intervals = plan_horizon(plan)
    if group.get("instances"):
        gpus = [0] * intervals
        for pool, row in zip(group["pools"], group["instances"]):
            for k, count in enumerate(row):
                gpus[k] += count * plan["pools"][pool]["gpus_per_instance"]
        return gpus
    changes = [(parse_instant(change["at"]), change["desired_capacity"]) for change in group["schedule"]]
    gpus, desired, index = [], group["min_capacity"], 0
    for k in range(intervals):
        while index < len(changes) and changes[index][0] <= start + step * k:
            desired = changes[index][1]
            index += 1
        gpus.append(desired)
    return gpus


def check_schedule_covers_plan(plan, group_name, actions, initial, where):
    """Replays `actions` and fails unless the capacity is at least the plan's in every interval and
    the group holds no more actions than AWS allows. Returns (actions, extra GPU-intervals)."""
    group = next(group for group in plan["groups"] if group["name"] == group_name)
    if len(actions) > AWS_MAX_ACTIONS_PER_GROUP:
        fail(f"{where}: {len(actions)} scheduled actions; AWS allows {AWS_MAX_ACTIONS_PER_GROUP} per group")
    floor = planned_gpus(plan, group)
    capacity = replay(actions, plan_horizon(plan), initial)
    below = [k for k, (have, want) in enumerate(zip(capacity, floor)) if have < want]
    if below:
        k = below[0]
        fail(f"{where}: the replayed schedule holds {capacity[k]} GPUs in interval {k}, below the plan's {floor[k]}")
    check_launch_lead(plan, group, actions, initial, floor, where)
    return len(actions), sum(have - want for have, want in zip(capacity, floor))


def launch_lead(group):
    """The plan group's launch lead rounded up to whole minutes, as actions and cron triggers are
    set; zero when it has none."""
    lead = parse_duration(group["launch_lead"]) if group.get("launch_lead") else datetime.timedelta(0)
    return datetime.timedelta(minutes=-(-lead.total_seconds() // 60))


def check_launch_lead(plan, group, actions, initial, floor, where):
    """Fails unless the actions hold each interval's planned GPUs from the group's launch lead
    before the interval starts: the plan was simulated launching that early, so the export must
    launch that early too."""
    lead = launch_lead(group)
    horizon = plan_horizon(plan)
    start, step, intervals = horizon
    firings = sorted_firings(actions, horizon)
    for k in range(1, intervals):
        begin = start + step * k
        have = lowest_between(firings, initial, max(start, begin - lead), begin)
        if have < floor[k]:
            fail(f"{where}: {have} GPUs in force {lead} before interval {k}, below the {floor[k]} the plan "
                 f"launches by then (launch_lead {group.get('launch_lead')})")
