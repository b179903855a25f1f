#!/usr/bin/env python3
"""`fleetcast serve` tested as a client would: start it on a free port of 127.0.0.1, send plans from
16 clients at once and compare every reply with what the CLI prints for the same input, while bad
requests, a slow client and a stalled one come and go; then the time limit, the bounded queue and
a clean exit on SIGTERM with requests in flight.

Usage: serve_test.py FLEETCAST EXAMPLES_DIR WORK_DIR [REQUESTS_PER_CLIENT=20]. Standard library only
(http.client). The sanitized build sends fewer plans per client (tests/serve/CMakeLists.txt)."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time

FLEETCAST, EXAMPLES, WORK = sys.argv[1], sys.argv[2], sys.argv[3]
REQUESTS_PER_CLIENT = int(sys.argv[4]) if len(sys.argv) > 4 else 20
CLIENTS = 16
QUICKSTART = os.path.join(EXAMPLES, "quickstart.json")
RECSYS = os.path.join(EXAMPLES, "recsys_planned.json")
SHUTDOWN_REPLICAS = "2000"  # about a second of work per plan
TRAIN_UNTIL = "2026-12-11T00:00:00Z"  # quickstart's backtest: its hindsight MILP is proven optimal in about a second
RECSYS_TRAIN_UNTIL = "2026-12-19T00:00:00Z"  # recsys_planned's: its MILP searches to its 60 s limit
# A forecast of quickstart's held-out 72 hours (its demand has no CSV: Unix epoch seconds), a daily
# cycle around 24 GPUs, as `fleetcast forecast predict --json` writes one.
QUICKSTART_FORECAST = {"model": "hand", "steps": [
    {"timestamp": 1796947200 + 3600 * h,
     "quantiles": {"p10": 18 + 6 * (h % 24 > 12), "p50": 24 + 6 * (h % 24 > 12), "p90": 30 + 6 * (h % 24 > 12)}}
    for h in range(72)]}
failures = []


def check(condition, what):
    if not condition:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)


def cli(*args):
    return subprocess.run([FLEETCAST, *args], check=True, capture_output=True).stdout


def cli_error(*args):
    return subprocess.run([FLEETCAST, *args], capture_output=True).stderr.decode()


class Server:
    """`fleetcast serve --port 0 ARGS`; the port is read from the first log line."""

    def __init__(self, *args):
        self.process = subprocess.Popen([FLEETCAST, "serve", "--port", "0", *args], stderr=subprocess.PIPE)
        first = json.loads(self.process.stderr.readline())
        assert first["event"] == "listening" and first["address"].startswith("127.0.0.1:"), first
        self.port = first["port"]
        self.log = []
        self.reader = threading.Thread(target=lambda: self.log.extend(self.process.stderr), daemon=True)
        self.reader.start()

    def request(self, method, path, body=None, headers=None, timeout=120):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        try:
            connection.request(method, path, body=body, headers=headers or {})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def error(self, method, path, body=None):
        status, headers, data = self.request(method, path, body)
        return status, headers, json.loads(data)["error"]

    def admitted(self):
        return json.loads(self.request("GET", "/healthz")[2])["admitted"]

    def wait_admitted(self, count, limit=30):
        """True once `count` requests are admitted at once; False after `limit` seconds."""
        end = time.time() + limit
        while self.admitted() < count:
            if time.time() > end:
                return False
            time.sleep(0.02)
        return True

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=150)
        self.reader.join(timeout=5)
        return code


def write_json(path, document):
    with open(path, "w") as f:
        json.dump(document, f)
    return path


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


def make_data_dir():
    """A data directory like the examples', plus a symlink leading out of it."""
    data_dir = os.path.join(WORK, "data-dir")
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.copytree(os.path.join(EXAMPLES, "data"), os.path.join(data_dir, "data"))
    outside = os.path.join(WORK, "outside.csv")
    shutil.copy(os.path.join(EXAMPLES, "data", "recsys_requests_per_second_1h.csv"), outside)
    os.symlink(outside, os.path.join(data_dir, "data", "link.csv"))
    return data_dir


def with_csv(path):
    scenario = json.loads(read_file(RECSYS))
    scenario["workloads"][0]["demand"]["csv"] = path
    return json.dumps(scenario).encode()


def without_timings(backtest_json):
    """A backtest document less the two wall times it reports (planning and the MILP's solve)."""
    document = json.loads(backtest_json)
    document.pop("planning_seconds")
    document["hindsight_optimum"].pop("solve_seconds")
    return document


def expected_validation(name, body):
    """What `fleetcast validate` says of `body` saved as a file, with the file named as the server names it."""
    path = os.path.join(WORK, name)
    with open(path, "wb") as f:
        f.write(body)
    return cli_error("validate", path).strip().replace(path, "body")


def load(server, expected, clients=CLIENTS, requests=REQUESTS_PER_CLIENT):
    """`clients` threads each sending `requests` plans; every reply must equal the CLI's bytes."""
    bodies = [(read_file(QUICKSTART), "/v1/plan", expected["quickstart"]),
              (read_file(RECSYS), "/v1/plan?replicas=4", expected["recsys"])]
    bad, done = [], []

    def send(connection, path, body, reused):
        """The reply to `body` on the client's connection; a `reused` (kept-alive) one is reopened
        and the request sent once more when the server had closed it before the request arrived:
        it closes a connection idle for its keep-alive timeout (here 2 s, the read timeout), and
        on a loaded machine a client thread can take that long between two requests (CI,
        2026-11-27: two clients reset, no reply wrong). Any HTTP client that keeps connections
        alive retries so. A fresh connection reset is a failure."""
        try:
            connection.request("POST", path, body=body)
            return connection.getresponse()
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
            if not reused:
                raise
            connection.close()
            connection.request("POST", path, body=body)
            return connection.getresponse()

    def client(number):
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        for i in range(requests):
            body, path, want = bodies[(number + i) % 2]
            response = send(connection, path, body, reused=i > 0)
            data = response.read()
            if response.status != 200 or data != want:
                bad.append((number, i, response.status, data[:200]))
            done.append(i)
        connection.close()

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for thread in threads:
        thread.start()
    return threads, bad, done


def check_bad_requests(server, data_dir):
    malformed = b'{"version": 1, "name": '
    status, _, error = server.error("POST", "/v1/plan", malformed)
    check(status == 400 and error["message"] == expected_validation("malformed.json", malformed),
          f"malformed JSON: 400 with validate's message, got {status} {error}")
    unknown = json.loads(read_file(QUICKSTART))
    unknown["colour"] = "blue"
    unknown = json.dumps(unknown).encode()
    status, _, error = server.error("POST", "/v1/plan", unknown)
    check(status == 400 and error["message"] == expected_validation("unknown.json", unknown) and "colour" in error["message"],
          f"unknown field: 400 with validate's message, got {status} {error}")
    status, _, error = server.error("POST", "/v1/plan", b" " * 70000)
    check(status == 413 and error["code"] == "payload_too_large", f"oversized body: 413, got {status} {error}")
    check_body_framing(server)
    for what, path in [("../", "../outside.csv"), ("absolute", os.path.join(WORK, "outside.csv")),
                       ("symlink", "data/link.csv")]:
        status, _, error = server.error("POST", "/v1/plan", with_csv(path))
        check(status == 400 and "body: /workloads/0/demand/csv: the path" in error["message"]
              and "leads outside --data-dir" in error["message"]
              and WORK not in error["message"], f"path escape ({what}): 400, not naming server folders, got {status} {error}")
    status, _, error = server.error("GET", "/v1/nothing")
    check(status == 404 and error["code"] == "not_found", f"unknown route: 404, got {status} {error}")
    status, headers, error = server.error("GET", "/v1/plan")
    check(status == 405 and headers.get("Allow") == "POST", f"wrong method: 405 with Allow, got {status} {headers}")
    status, _, error = server.error("POST", "/v1/plan?colour=blue", read_file(QUICKSTART))
    check(status == 400 and "unknown query parameter 'colour'" in error["message"], f"unknown option: 400, got {error}")
    status, _, error = server.error("POST", "/v1/simulate?replicas=1&replicas=2", read_file(QUICKSTART))
    check(status == 400 and "query parameter 'replicas' is given 2 times; expected it once" in error["message"],
          f"an option given twice: 400, not the last one silently, got {status} {error}")
    status, _, error = server.error("GET", "/healthz?x=1")
    check(status == 400 and "unknown query parameter 'x'" in error["message"], f"healthz with a parameter: 400, got {status} {error}")
    status, _, _ = server.request("GET", "/v1/offers?region=us-east-1&region=eu-west-1")
    check(status == 200, f"offers takes region more than once, got {status}")
    status, _, error = server.error("POST", "/v1/backtest?train_until=2030-01-01T00:00:00Z", read_file(QUICKSTART))
    check(status == 400 and error["message"].startswith("train_until 2030-01-01T00:00:00Z: expected an instant inside"),
          f"a cut outside the horizon: 400 naming train_until, not the CLI's flag, got {status} {error}")
    for option, message in [("forecaster=nope", "forecaster: expected auto, lstm, validated, holt_winters or seasonal_naive"),
                             ("budget=-5", "budget: expected a positive amount of USD"), ("risk=2", "expected a demand quantile from 0.5")]:
        status, _, error = server.error("POST", "/v1/plan?" + option, read_file(QUICKSTART))
        check(status == 400 and message in error["message"], f"{option}: 400 saying '{message}', got {status} {error}")


def check_other_endpoints(server, expected):
    status, _, data = server.request("POST", "/v1/simulate", read_file(QUICKSTART))
    check(status == 200 and data == expected["run"], "simulate equals `fleetcast run --json`")
    status, _, data = server.request("POST", "/v1/backtest?train_until=" + TRAIN_UNTIL, read_file(QUICKSTART))
    check(status == 200 and without_timings(data) == without_timings(expected["backtest"]),
          "backtest equals `fleetcast backtest --json` but for its wall times")
    status, _, data = server.request("POST", "/v1/backtest?replan_every=1d&train_until=" + TRAIN_UNTIL, read_file(QUICKSTART))
    check(status == 200 and without_timings(data) == without_timings(expected["replanned"]),
          "backtest?replan_every=1d equals `fleetcast backtest --replan-every 1d --json` but for its wall times")
    status, _, data = server.request("POST", "/v1/backtest?replan_on_drift=true&train_until=" + TRAIN_UNTIL, read_file(QUICKSTART))
    check(status == 200 and without_timings(data) == without_timings(expected["replanned_on_drift"]),
          "backtest?replan_on_drift=true equals `fleetcast backtest --replan-on-drift --json` but for its wall times")
    status, _, error = server.error("POST", "/v1/backtest?replan_on_drift=yes&train_until=" + TRAIN_UNTIL, read_file(QUICKSTART))
    check(status == 400 and error["message"] == "query parameter 'replan_on_drift': expected true or false, got 'yes'",
          f"replan_on_drift=yes: 400 saying it expects true or false, got {status} {error}")
    status, _, error = server.error("POST", "/v1/backtest?replan_every=90m&train_until=" + TRAIN_UNTIL, read_file(QUICKSTART))
    check(status == 400 and error["message"].startswith("replan_every: expected a whole number of the horizon's"),
          f"a re-planning period of part of a step: 400 naming replan_every, got {status} {error}")
    status, headers, data = server.request("POST", "/v1/plan", read_file(QUICKSTART), {"Accept": "text/html"})
    check(status == 200 and headers["Content-Type"].startswith("text/html") and data == expected["html"],
          "Accept: text/html gives `fleetcast plan --html`'s report")
    status, _, data = server.request("POST", "/v1/export?format=kubernetes", expected["quickstart"])
    document = json.loads(data) if status == 200 else {}
    check(status == 200 and document.get("summary") == json.loads(expected["export_summary"]),
          "export's summary equals `fleetcast export --json`")
    files = {f["path"]: f["contents"].encode() for f in document.get("files", [])}
    written = {os.path.relpath(os.path.join(d, n), expected["export_dir"]): read_file(os.path.join(d, n))
               for d, _, names in os.walk(expected["export_dir"]) for n in names}
    check(files == written and files, "export's files equal those `fleetcast export` writes")
    # A plan file may name its groups anything: a path that would leave the export folder is
    # refused as the CLI refuses it, not handed back for the client to write.
    escaping = json.loads(expected["quickstart"])
    escaping["groups"][0]["name"] = "../../evil"
    status, _, error = server.error("POST", "/v1/export?format=aws", json.dumps(escaping).encode())
    check(status == 400 and "would lie outside the export folder" in error.get("message", ""),
          f"an export whose paths leave the folder: 400, got {status} {error}")
    # curl --data-binary sends a form-encoded type; a plan document is tens of KiB, past the 8 KiB
    # httplib allows a form when it reads the body itself.
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    check(len(expected["quickstart"]) > 8192, "the plan document is over 8 KiB")
    status, _, form_data = server.request("POST", "/v1/export?format=kubernetes", expected["quickstart"], form)
    check(status == 200 and form_data == data, f"a plan sent as curl --data-binary sends it: 200, got {status} {form_data[:200]}")
    multipart = {"Content-Type": "multipart/form-data; boundary=b"}
    upload = b'--b\r\nContent-Disposition: form-data; name="f"\r\n\r\n{}\r\n--b--\r\n'
    status, _, raw = server.request("POST", "/v1/plan", upload, multipart)
    error = json.loads(raw)["error"] if raw.startswith(b"{") else {}
    check(status == 415 and "send the JSON document itself as the body" in error.get("message", ""),
          f"a multipart upload: 415 saying what to send, got {status} {raw[:200]}")
    taken = subprocess.run([FLEETCAST, "serve", "--port", str(server.port)], capture_output=True, timeout=30)
    check(taken.returncode == 1 and b"cannot listen on 127.0.0.1:" in taken.stderr,
          f"a second server on a port in use: exit 1, cannot listen; got {taken.returncode} {taken.stderr[-300:]}")
    status, _, data = server.request("GET", "/v1/offers?gpu=H100&option=on_demand")
    check(status == 200 and data == expected["offers"], "offers equal `fleetcast pricing list --json`")
    status, _, data = server.request("GET", "/healthz")
    check(status == 200 and json.loads(data)["status"] == "ok", "healthz")
    check_envelope(server, expected)
    check_supplied_forecast(server, expected)


def check_envelope(server, expected):
    """Options as body fields: {"scenario": ..., "options": ...} plans as the CLI does with the same
    options (the plan's scenario_hash is then of the scenario's JSON text, not of the file's bytes)."""
    scenario = json.loads(read_file(QUICKSTART))
    envelope = json.dumps({"scenario": scenario, "options": {"risk": 0.9, "replicas": 4}}).encode()
    status, _, data = server.request("POST", "/v1/plan", envelope)
    without_hash = lambda text: {k: v for k, v in json.loads(text).items() if k != "scenario_hash"}
    check(status == 200 and without_hash(data) == without_hash(expected["enveloped"]),
          f"an envelope's options plan as `fleetcast plan --risk 0.9 --replicas 4`, got {status}")
    # A number as JSON writes it: 4.0 is the count 4, as 4 is.
    as_float = json.dumps({"scenario": scenario, "options": {"risk": 0.9, "replicas": 4.0}}).encode()
    status, _, float_data = server.request("POST", "/v1/plan", as_float)
    check(status == 200 and without_hash(float_data) == without_hash(expected["enveloped"]),
          f"replicas 4.0 in an envelope plans as replicas 4, got {status} {float_data[:200]}")
    status, _, error = server.error("POST", "/v1/plan?risk=0.8", envelope)
    check(status == 400 and "option 'risk' is given both in the query and in the body" in error["message"],
          f"an option given both ways: 400, got {status} {error}")
    status, _, error = server.error("POST", "/v1/plan", json.dumps({"scenario": scenario, "colour": 1}).encode())
    check(status == 400 and "body: unknown field 'colour'" in error["message"], f"unknown envelope field: 400, got {error}")
    status, _, error = server.error("POST", "/v1/plan", json.dumps({"scenario": scenario, "options": {"risk": True}}).encode())
    check(status == 400 and "options/risk: expected a string or a number" in error["message"], f"boolean option: 400, got {error}")


def check_supplied_forecast(server, expected):
    """An envelope's "forecasts" backtest as `fleetcast backtest --forecast WORKLOAD=FILE` does; a
    forecast that is none is refused naming it, and an endpoint that plans nothing refuses the field."""
    scenario = json.loads(read_file(QUICKSTART))
    envelope = {"scenario": scenario, "forecasts": {"image-api": QUICKSTART_FORECAST}, "options": {"train_until": TRAIN_UNTIL}}
    status, _, data = server.request("POST", "/v1/backtest", json.dumps(envelope).encode())
    document = json.loads(data) if status == 200 else {}
    check(status == 200 and document.get("forecasters") == {"image-api": "supplied"} and
          without_timings(data) == without_timings(expected["supplied"]),
          f"an envelope's forecasts backtest as `fleetcast backtest --forecast`, got {status} {data[:300]!r}")
    broken = dict(envelope, forecasts={"image-api": {"steps": [{"timestamp": 0, "quantiles": {"p10": 1}}] * 2}})
    status, _, error = server.error("POST", "/v1/backtest", json.dumps(broken).encode())
    check(status == 400 and "body: forecasts/image-api: /steps/0/quantiles: expected the median" in error["message"],
          f"a forecast without a median: 400 naming it, got {status} {error}")
    status, _, error = server.error("POST", "/v1/simulate", json.dumps({"scenario": scenario, "forecasts": {}}).encode())
    check(status == 400 and "body: unknown field 'forecasts'; expected scenario and options" in error["message"],
          f"forecasts where nothing is planned: 400, got {status} {error}")


def raw_exchange(server, request):
    """Sends `request` (bytes) and returns the status line's code and the seconds until the reply."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        start = time.time()
        try:
            sock.sendall(request)
        except (BrokenPipeError, ConnectionResetError):
            pass  # refused while the body was still going out: the reply is what counts
        reply = sock.recv(200)
        return int(reply.split(b" ")[1]) if reply.startswith(b"HTTP/1.1 ") else 0, time.time() - start


def check_body_framing(server):
    """--max-body holds a chunked body as it holds a Content-Length (before, a chunked body was
    read whole whatever its size); a request whose body httplib would wait for or skip in vain is
    answered at once, not after --read-timeout (2 s)."""
    head = b"POST /v1/plan HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    chunk = b" " * 30000
    chunked = head + b"Transfer-Encoding: chunked\r\n\r\n" + (b"%x\r\n" % len(chunk) + chunk + b"\r\n") * 3 + b"0\r\n\r\n"
    for what, request, code in [
            ("a chunked body over --max-body", chunked, 413),
            ("no length", head + b"Connection: close\r\n\r\n", 411),
            ("a negative length", head + b"Content-Length: -5\r\n\r\n", 400),
            ("a length over --max-body", head + b"Content-Length: 99999999999\r\n\r\n", 413),
            ("POST to a GET route without a length", b"POST /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 405)]:
        status, seconds = raw_exchange(server, request)
        check(status == code and seconds < 1.5, f"{what}: {code} at once, got {status} after {seconds:.2f} s")
    small = read_file(QUICKSTART)
    status, _, data = server.request("POST", "/v1/simulate?replicas=1", iter([small[:1000], small[1000:]]))
    check(status == 200 and json.loads(data)["cost"], f"a chunked body within --max-body is served, got {status} {data[:200]}")


def slow_client(server, results, done):
    """Sends a request's headers one byte every 50 ms, for longer than --read-timeout (2 s) in all:
    it is served (the limit is on silence, not on the whole request), and the plans of the other
    clients go on meanwhile (`done` counts them)."""
    request = (b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        start, done_before = time.time(), len(done)
        for byte in request:
            sock.sendall(bytes([byte]))
            time.sleep(0.05)
        results["slow"] = (sock.recv(100), time.time() - start, len(done) - done_before)


def stalled_client(server, results):
    """Sends half a request line and falls silent: disconnected after --read-timeout (2 s)."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=30) as sock:
        sock.sendall(b"POST /v1/pl")
        start = time.time()
        reply = sock.recv(200)
        results["stalled"] = (reply, time.time() - start)


def expected_outputs(prices_db):
    expected = {
        "quickstart": cli("plan", QUICKSTART, "--json", "--quiet"),
        "recsys": cli("plan", RECSYS, "--json", "--quiet", "--replicas", "4"),
        "shutdown": cli("plan", QUICKSTART, "--json", "--quiet", "--replicas", SHUTDOWN_REPLICAS),
        "enveloped": cli("plan", QUICKSTART, "--json", "--quiet", "--risk", "0.9", "--replicas", "4"),
        "run": cli("run", QUICKSTART, "--json"),
        "backtest": cli("backtest", QUICKSTART, "--train-until", TRAIN_UNTIL, "--json", "--quiet"),
        "replanned": cli("backtest", QUICKSTART, "--train-until", TRAIN_UNTIL, "--json", "--quiet", "--replan-every", "1d"),
        "replanned_on_drift": cli("backtest", QUICKSTART, "--train-until", TRAIN_UNTIL, "--json", "--quiet", "--replan-on-drift"),
        "supplied": cli("backtest", QUICKSTART, "--train-until", TRAIN_UNTIL, "--json", "--quiet", "--forecast",
                        "image-api=" + write_json(os.path.join(WORK, "quickstart.forecast.json"), QUICKSTART_FORECAST)),
        "offers": cli("pricing", "list", "--db", prices_db, "--gpu", "H100", "--option", "on_demand", "--json"),
    }
    html = os.path.join(WORK, "quickstart.html")
    cli("plan", QUICKSTART, "--quiet", "--html", html)
    # The report names the scenario's file; the server names a body "body", as in its messages.
    expected["html"] = read_file(html).replace(b"<td>" + QUICKSTART.encode() + b"</td>", b"<td>body</td>")
    plan = os.path.join(WORK, "quickstart.plan.json")
    with open(plan, "wb") as f:
        f.write(expected["quickstart"])
    expected["export_dir"] = os.path.join(WORK, "export")
    expected["export_summary"] = cli("export", plan, "--format", "kubernetes", "--out", expected["export_dir"], "--json")
    return expected


def check_load_and_misbehaviour(data_dir, prices_db, expected):
    server = Server("--data-dir", data_dir, "--prices", prices_db, "--max-body", "65536", "--read-timeout", "2",
                    "--queue", "64")
    threads, bad, done = load(server, expected)
    results = {}
    side = [threading.Thread(target=slow_client, args=(server, results, done)),
            threading.Thread(target=stalled_client, args=(server, results))]
    for thread in side:
        thread.start()
    check_bad_requests(server, data_dir)
    check_other_endpoints(server, expected)
    for thread in threads + side:
        thread.join()
    check(not bad, f"every plan under load equals the CLI's bytes; {len(bad)} did not: {bad[:3]}")
    reply, took, served_meanwhile = results.get("slow", (b"?", 0, 0))
    check(reply.startswith(b"HTTP/1.1 200") and took > 2 and served_meanwhile > 0,
          f"the slow client is served after {took:.1f} s, {served_meanwhile} plans meanwhile: {reply!r}")
    reply, waited = results.get("stalled", (b"?", 0))
    check((reply == b"" or reply.startswith(b"HTTP/1.1 408")) and 1.5 < waited < 10,
          f"the stalled client is disconnected after the read timeout: {reply!r} after {waited:.1f} s")
    check(server.stop() == 0, "exit 0 on SIGTERM")
    lines = [json.loads(line) for line in server.log]
    requests = [line for line in lines if "request_id" in line]
    check(len(requests) >= CLIENTS * REQUESTS_PER_CLIENT and all({"time", "method", "path", "status", "duration_ms", "bytes"} <= set(line)
                                           for line in requests), "one JSON log line per request")


def check_limits(expected):
    """One worker, one place in the queue, a 3 s time limit."""
    server = Server("--threads", "1", "--queue", "1", "--time-limit", "3")
    replies = {}

    def send(name, path):
        start = time.time()
        replies[name] = (*server.request("POST", path, read_file(QUICKSTART)), time.time() - start)

    slow = "/v1/plan?replicas=100000"  # a minute of work, if it ran to its end
    first = threading.Thread(target=send, args=("first", slow))
    first.start()
    check(server.wait_admitted(1), "the first request is admitted")
    second = threading.Thread(target=send, args=("second", slow))
    second.start()
    check(server.wait_admitted(2), "the second request is admitted")
    status, headers, data = server.request("POST", "/v1/plan", read_file(QUICKSTART))
    check(status == 503 and headers.get("Retry-After") == "1" and json.loads(data)["error"]["code"] == "queue_full",
          f"queue full: 503 with Retry-After, got {status} {headers}")
    first.join()
    second.join()
    status, _, data, took = replies["first"]
    check(status == 504 and json.loads(data)["error"]["code"] == "deadline_exceeded" and took < 20,
          f"past the time limit: 504 once its work is cancelled, got {status} after {took:.1f} s: {data[:200]}")
    status, _, data = server.request("POST", "/v1/simulate", read_file(QUICKSTART))
    check(status == 200 and data == expected["run"], "healthy after a cancelled request")
    check(server.admitted() == 0, "nothing left admitted")
    check(server.stop() == 0, "exit 0 on SIGTERM")


def check_shutdown(expected):
    """SIGTERM with requests in flight (four plans of about a second each on two workers): each is
    answered in full after the signal, then the process exits 0. The grace period is far longer than
    the work (the server exits as soon as it is done), and so is the time limit, so that the
    sanitized build, some thirty times slower beside other tests (a plan there took 30 s in CI, and the
    later two of four then met the default 60 s limit), is held to the same promise."""
    server = Server("--threads", "2", "--queue", "8", "--grace", "120", "--time-limit", "600")
    replies = []

    def send():
        reply = server.request("POST", "/v1/plan?replicas=" + SHUTDOWN_REPLICAS, read_file(QUICKSTART))
        replies.append((*reply, time.time()))

    threads = [threading.Thread(target=send) for _ in range(4)]
    for thread in threads:
        thread.start()
    check(server.wait_admitted(4), "four requests in flight before SIGTERM")
    signalled = time.time()
    code = server.stop()
    for thread in threads:
        thread.join()
    check(code == 0, f"exit 0 on SIGTERM, got {code}")
    check(len(replies) == 4 and all(r[0] == 200 and r[2] == expected["shutdown"] and r[3] > signalled for r in replies),
          f"in-flight requests complete after SIGTERM: {[(r[0], round(r[3] - signalled, 2)) for r in replies]}")
    check(json.loads(server.log[-1]).get("event") == "stopped", "the last log line says it stopped")


def sigterm_in_flight(server, path, body, settle=0.0):
    """Sends `body` to `path`, and SIGTERMs the server `settle` seconds after it admitted the
    request: (admitted in time, exit code, seconds from the signal to the exit, the reply)."""
    replies = []
    thread = threading.Thread(target=lambda: replies.append(server.request("POST", path, body)))
    thread.start()
    admitted = server.wait_admitted(1)
    time.sleep(settle)
    signalled = time.time()
    code = server.stop()
    thread.join()
    return admitted, code, time.time() - signalled, replies[0] if replies else (0, {}, b"{}")


def shutting_down(status, data):
    """The reply of a request cancelled at shutdown: 503 with error code shutting_down."""
    return status == 503 and json.loads(data).get("error", {}).get("code") == "shutting_down"


def check_shutdown_past_grace():
    """SIGTERM with a request that would take a minute and --grace 0.5: its work is cancelled after
    the grace period, it gets 503 shutting_down, and the process still exits 0, long before the minute."""
    server = Server("--threads", "1", "--grace", "0.5")
    admitted, code, took, (status, _, data) = sigterm_in_flight(server, "/v1/plan?replicas=100000", read_file(QUICKSTART))
    check(admitted, "a long request in flight before SIGTERM")
    check(code == 0 and took < 15, f"exit 0 soon after the grace period, got {code}")
    check(shutting_down(status, data),
          f"the request cancelled past the grace period gets 503 shutting_down, got {status} {data[:200]}")


def check_listen_backlog():
    """The listening socket queues as many connections as the kernel allows (net.core.somaxconn),
    not the 5 Debian's libcpp-httplib listens with (found looking into connection resets of the
    load test above under the sanitizers in CI, 2026-11-28; not shown to be their cause: a stopped
    server's 24 waiting clients were all served once it resumed). `ss` (iproute2) reads it."""
    if shutil.which("ss") is None:
        print("skipped the listen backlog check: ss not found (apt-get install iproute2)")
        return
    server = Server()
    listing = subprocess.run(["ss", "-ltnH", f"sport = :{server.port}"], capture_output=True, text=True).stdout.split()
    backlog = int(listing[2]) if len(listing) > 2 and listing[0] == "LISTEN" else 0
    check(backlog >= 128, f"a listen backlog of at least 128, got {backlog} ({listing})")
    check(server.stop() == 0, "exit 0 on SIGTERM")


def check_shutdown_in_the_optimum(data_dir, prices_db):
    """SIGTERM while a backtest's hindsight MILP searches (recsys_planned's runs to its 60 s limit;
    the plan before it takes a fraction of a second) and --grace 0.5: cancelled past the grace period,
    CBC stops at its next node, the request gets 503 shutting_down and the process exits long before
    the MILP's limit (it waited the limit out until 2026-11-28)."""
    server = Server("--threads", "1", "--grace", "0.5", "--data-dir", data_dir, "--prices", prices_db)
    # 3 s settle: past the plan, into the MILP's search.
    admitted, code, took, (status, _, data) = sigterm_in_flight(
        server, "/v1/backtest?train_until=" + RECSYS_TRAIN_UNTIL, read_file(RECSYS), settle=3)
    check(admitted, "a backtest in flight before SIGTERM")
    check(code == 0 and took < 20, f"exit 0 soon after the grace period, in the MILP, got {code} after {took:.1f} s")
    check(shutting_down(status, data),
          f"the backtest cancelled in its MILP gets 503 shutting_down, got {status} {data[:200]}")


def main():
    data_dir = make_data_dir()
    prices_db = os.path.join(WORK, "prices.db")
    cli("pricing", "list", "--db", prices_db)  # created from the built-in catalog
    expected = expected_outputs(prices_db)
    check_load_and_misbehaviour(data_dir, prices_db, expected)
    check_limits(expected)
    check_shutdown(expected)
    check_shutdown_past_grace()
    check_shutdown_in_the_optimum(data_dir, prices_db)
    check_listen_backlog()
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
