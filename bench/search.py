#!/usr/bin/env python3
"""Archivist search benchmark: fetching from the Article Search API (the fake server) into the store.

Builds `archivist` (with libArchivistNetwork.so beside it, which it loads to fetch) and `fake-nyt`
in release mode, starts one `fake-nyt --docs N --seed S --from 2015-01-01 --to 2024-12-31` for the
whole run (every contestant reads the same corpus), then, each on a fresh folder and repeated (3
times by default, the order rotating), measures:

  (1) archivist search   `archivist --data DIR --format jsonl search --all --from 2015-01-01
                         --to 2024-12-31 --fields _id --limit 0` with NYT_API_KEY, NYT_API_BASE and
                         ARCHIVIST_PACE=0: docs/s, and the requests it sent (api-usage.json,
                         requests_per_day summed); the summary line must say fetched == N and
                         `archivist --data DIR count` must say N afterwards
  (2) python, files      a standard-library peer: pages through the same server with urllib (a date
                         range with more than 1,000 hits is halved, recursively), json.loads each
                         page, writes each document as pretty, sorted-key JSON into docs/<bb>/ (256
                         hash buckets) through tmp/ + os.replace, one os.sync() at the end
  (3) python, sqlite3    the same paging, each page in one transaction of INSERT OR REPLACE into
                         docs(id TEXT PRIMARY KEY, body TEXT) (rollback journal, synchronous=FULL)
  (0) GET only           the same paging and json.loads, storing nothing: what the fake server and
                         HTTP cost by themselves

and, for information,

  (4) refresh            after one untimed `search --all ... --save s` on a fresh folder, `archivist
                         refresh s` as a whole process (finds nothing new: it must send 1 request)

Then the Archive API section (alone with --archive-only): a second fake-nyt, `--docs 8000 --from
2019-01-01 --to 2019-01-31 --full-crops 10` (a month of 8,000 documents, its body of about 23 MB served by
/svc/archive/v1/2019/1.json in one answer), and, each on a fresh folder, repeated (3 times by
default, the order rotating):

  (A) archivist archive  `archivist --data DIR --format jsonl archive 2019-01 --pace 0` under
                         /usr/bin/time -v (its "Maximum resident set size" is the peak RSS): its
                         summary must say added == 8,000 and failed == [], and `archivist count` 8,000
  (B) python, GET only   urllib download of the month and json.loads, storing nothing
  (C) python, files      the same, then each document written as pretty, sorted-key JSON into
                         docs/<bb>/ (256 hash buckets) with os.open/os.write/os.close, one os.sync() at
                         the end (not durable per document)

with docs/s and MB/s (of the body) for each, archivist's rate as a share of (B) (target: at least
50%) and archivist's peak RSS against 2.5 x the body + 100 MB (the target).

Every number is the wall time of one child process (start to exit) with its peak RSS from wait4(2);
a global sync(2) runs before each timed run; the fake server runs all along on the same machine, and
its CPU time during each run is read from /proc and reported, as are each contestant's CPU time and
context switches (from its wait4). The load average is printed: on a shared machine, compare
only numbers of one run.

Prints a Markdown table (median and min-max), PASS/FAIL for invariants (not speed targets): every
contestant fetched N documents, archivist sent exactly the requests it needed, a refresh that finds
nothing new sent one request; and for the archive, the issue's two targets. Writes it to
bench/out/search.md (search-archive.md with --archive-only) and exits 1 when a check fails.

Usage:
  python3 bench/search.py                   # 10,000 documents, then the archive month of 8,000
  python3 bench/search.py --quick           # 3,000 documents, then the archive month
  python3 bench/search.py --archive-only    # the archive section alone (written to bench/out/search-archive.md)
  python3 bench/search.py --count 20000 --repeats 3 --seed 42 [--archive-docs 8000] [--scratch-path PATH] [--workdir DIR] [--skip-build]

Standard library only.
"""

import datetime
import json
import math
import os
import platform
import re
import select
import shutil
import signal
import sqlite3
import statistics
import subprocess
import sys
import time
import urllib.parse
import urllib.request

from benchkit import (binaries, check, cpu_seconds, fmt_rate, last_json_line, log, machine_stamp, measure,
                      parse_arguments, publish, rotated, source_state, stats_of, table_row, work_folder)


FIRST_DAY = "2015-01-01"
LAST_DAY = "2024-12-31"
API_KEY = "test-key"
SEARCH_PATH = "/svc/search/v2/articlesearch.json"
PAGE_SIZE = 10
REACHABLE_HITS = 1_000  # the API serves pages 0..100 of 10 (archivist pages through hits <= 1,000)
LAST_PAGE = 100
ARCHIVIST_PART_HITS = 800  # Harvester.targetHitsPerPart: archivist splits a range into parts of ~800 hits
ARCHIVE_YEAR, ARCHIVE_MONTH = 2019, 1  # the archive section's month
ARCHIVE_FIRST_DAY, ARCHIVE_LAST_DAY = "2019-01-01", "2019-01-31"
ARCHIVE_DOCS = 8_000  # a modern month (the issue: 5,000-8,000 documents)
ARCHIVE_FULL_CROPS = 10  # fake-nyt --full-crops: the month comes to about 23 MB (the issue: 20 MB or more)
ARCHIVE_MIN_BYTES = 20_000_000
ARCHIVE_RATE_TARGET = 0.50  # archivist's docs/s >= 50% of the download-and-parse-only peer's
ARCHIVE_RSS_FACTOR, ARCHIVE_RSS_EXTRA_MB = 2.5, 100.0  # peak RSS < 2.5 x the body + 100 MB
TIME_BINARY = "/usr/bin/time"

# The Python peer, run as its own process: MODE (files, sqlite or get), BASE URL, FIRST and LAST day,
# TARGET folder. Prints one JSON line. The key comes from NYT_API_KEY.
PY_PEER = r"""
import datetime, hashlib, json, os, sqlite3, sys, time, urllib.parse, urllib.request
mode, base, first, last, target = sys.argv[1:6]
key = os.environ["NYT_API_KEY"]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
requests = 0
splits = 0
seen = set()
written = 0
store = None

def get(begin, end, page):
    global requests
    query = urllib.parse.urlencode({"begin_date": begin.strftime("%Y%m%d"), "end_date": end.strftime("%Y%m%d"),
                                    "page": page, "api-key": key})
    with opener.open(base + "/svc/search/v2/articlesearch.json?" + query, timeout=30) as answer:
        body = answer.read()
    requests += 1
    response = json.loads(body)["response"]
    meta = response.get("meta") or response.get("metadata")
    return response.get("docs") or [], meta["hits"]

if mode == "files":
    docs_dir = os.path.join(target, "docs")
    tmp_dir = os.path.join(target, "tmp")
    os.makedirs(tmp_dir)
    os.makedirs(docs_dir)
    buckets = set()

    def store(docs):
        global written
        for doc in docs:
            digest = hashlib.sha1(doc["_id"].encode("utf-8")).hexdigest()
            bucket = digest[:2]
            if bucket not in buckets:
                os.makedirs(os.path.join(docs_dir, bucket), exist_ok=True)
                buckets.add(bucket)
            temporary = os.path.join(tmp_dir, digest + ".json")
            with open(temporary, "wb") as handle:
                handle.write(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8"))
            os.replace(temporary, os.path.join(docs_dir, bucket, digest + ".json"))
            written += 1
elif mode == "sqlite":
    os.makedirs(target)
    connection = sqlite3.connect(os.path.join(target, "docs.db"))
    connection.execute("PRAGMA journal_mode=DELETE")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute("CREATE TABLE docs(id TEXT PRIMARY KEY, body TEXT)")
    connection.commit()

    def store(docs):
        global written
        with connection:  # one transaction per page
            connection.executemany("INSERT OR REPLACE INTO docs VALUES(?, ?)",
                                   [(doc["_id"], json.dumps(doc, ensure_ascii=False, separators=(",", ":"))) for doc in docs])
        written += len(docs)
else:
    def store(docs):
        pass

def keep(docs):
    store(docs)
    for doc in docs:
        seen.add(doc["_id"])

def harvest(begin, end):
    global splits
    docs, hits = get(begin, end, 0)
    if hits > 1000 and end > begin:
        splits += 1
        middle = begin + (end - begin) // 2
        harvest(begin, middle)
        harvest(middle + datetime.timedelta(days=1), end)
        return
    keep(docs)
    for page in range(1, min(100, -(-hits // 10))):
        docs, _ = get(begin, end, page)
        if not docs:
            break
        keep(docs)

harvest(datetime.date.fromisoformat(first), datetime.date.fromisoformat(last))
sync_seconds = 0.0
if mode == "files":
    start = time.perf_counter()
    os.sync()
    sync_seconds = time.perf_counter() - start
elif mode == "sqlite":
    connection.close()
print(json.dumps({"fetched": len(seen), "written": written, "requests": requests, "splits": splits,
                  "sync_seconds": sync_seconds}))
"""


# The archive peer, run as its own process: MODE (files or get), BASE URL, YEAR, MONTH, TARGET folder.
# Downloads the month in one request with urllib, json.loads it, and in files mode writes each
# document to its own file (os.open/os.write/os.close), then one os.sync(). Prints one JSON line. The
# key comes from NYT_API_KEY.
PY_ARCHIVE_PEER = r"""
import hashlib, json, os, sys, time, urllib.parse, urllib.request
mode, base, year, month, target = sys.argv[1:6]
key = os.environ["NYT_API_KEY"]
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
start = time.perf_counter()
with opener.open(f"{base}/svc/archive/v1/{year}/{month}.json?" + urllib.parse.urlencode({"api-key": key}),
                 timeout=300) as answer:
    body = answer.read()
downloaded = time.perf_counter()
response = json.loads(body)["response"]
docs = response["docs"]
hits = (response.get("meta") or response.get("metadata"))["hits"]
parsed = time.perf_counter()
written = 0
sync_seconds = 0.0
if mode == "files":
    docs_dir = os.path.join(target, "docs")
    os.makedirs(docs_dir)
    buckets = set()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    for doc in docs:
        digest = hashlib.sha1(doc["_id"].encode("utf-8")).hexdigest()
        bucket = digest[:2]
        if bucket not in buckets:
            os.makedirs(os.path.join(docs_dir, bucket), exist_ok=True)
            buckets.add(bucket)
        data = memoryview(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        fd = os.open(os.path.join(docs_dir, bucket, digest + ".json"), flags, 0o644)
        try:
            while data:
                data = data[os.write(fd, data):]
        finally:
            os.close(fd)
        written += 1
    synced = time.perf_counter()
    os.sync()
    sync_seconds = time.perf_counter() - synced
print(json.dumps({"docs": len(docs), "distinct": len({doc["_id"] for doc in docs}), "hits": hits, "bytes": len(body),
                  "written": written, "download_seconds": downloaded - start, "parse_seconds": parsed - downloaded,
                  "sync_seconds": sync_seconds}))
"""


class FakeServer:
    """One fake-nyt process for the whole run (or section)."""

    def __init__(self, binary, count, seed, stderr_path, first=FIRST_DAY, last=LAST_DAY, extra=()):
        self.stderr = open(stderr_path, "wb")
        start = time.perf_counter()
        self.proc = subprocess.Popen([str(binary), "--docs", str(count), "--seed", str(seed), "--from", first,
                                      "--to", last, "--key", API_KEY, *extra],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self.stderr)
        ready, _, _ = select.select([self.proc.stdout], [], [], 120)
        line = self.proc.stdout.readline().decode("utf-8", "replace").strip() if ready else ""
        if not line.startswith("listening on "):
            self.stop()
            log(f"fake-nyt did not start (printed {line!r}); see {stderr_path}")
            sys.exit(1)
        self.base = line[len("listening on "):].rstrip("/")
        self.startup_seconds = time.perf_counter() - start

    def cpu_seconds(self):
        """User + system CPU seconds the server has used so far."""
        return cpu_seconds(self.proc.pid)

    def get(self, begin, end, page):
        """(documents, hits) of one page, for working out archivist's plan."""
        query = urllib.parse.urlencode({"begin_date": begin.strftime("%Y%m%d"), "end_date": end.strftime("%Y%m%d"),
                                        "page": page, "api-key": API_KEY})
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(f"{self.base}{SEARCH_PATH}?{query}", timeout=30) as answer:
            response = json.loads(answer.read())["response"]
        return response.get("docs") or [], (response.get("meta") or response.get("metadata"))["hits"]

    def month(self, year, month):
        """The archive's answer for a month: (body bytes, hits, documents)."""
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        query = urllib.parse.urlencode({"api-key": API_KEY})
        with opener.open(f"{self.base}/svc/archive/v1/{year}/{month}.json?{query}", timeout=300) as answer:
            body = answer.read()
        response = json.loads(body)["response"]
        return len(body), (response.get("meta") or response.get("metadata"))["hits"], len(response["docs"])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.stderr.close()


def archivist_plan(server, begin, end):
    """The requests archivist's Harvester needs for --all over begin..end, worked out from the
    server's hit counts with the same rule (split into ceil(hits/800) parts, at least 2, while a range
    has more than 1,000 hits): (requests, split probes, pages of the final ranges, final ranges)."""
    docs, hits = server.get(begin, end, 0)
    pages = -(-hits // PAGE_SIZE)
    if hits <= REACHABLE_HITS or not docs:
        return max(1, pages), 0, max(1, pages), 1
    days = (end - begin).days + 1
    if days <= 1:
        return LAST_PAGE, 0, LAST_PAGE, 1  # a single day past 1,000 hits: pages 0..99
    parts = min(days, max(2, -(-hits // ARCHIVIST_PART_HITS)))
    requests, probes, leaf_pages, leaves = 1, 1, 0, 0
    for part in range(parts):
        start = begin + datetime.timedelta(days=days * part // parts)
        stop = begin + datetime.timedelta(days=days * (part + 1) // parts - 1)
        r, p, lp, n = archivist_plan(server, start, stop)
        requests, probes, leaf_pages, leaves = requests + r, probes + p, leaf_pages + lp, leaves + n
    return requests, probes, leaf_pages, leaves


def requests_sent(folder):
    """requests_per_day of DIR/api-usage.json, summed (0 when there is no file)."""
    path = folder / "api-usage.json"
    if not path.exists():
        return 0
    return sum(json.loads(path.read_text(encoding="utf-8")).get("requests_per_day", {}).values())


def folder_bytes(folder):
    """Bytes of the blocks allocated under folder."""
    total = 0
    for dirpath, _, filenames in os.walk(folder):
        for name in filenames:
            total += os.lstat(os.path.join(dirpath, name)).st_blocks * 512
    return total


def archivist_count(archivist, folder):
    """`archivist --data FOLDER count`, or -1 (said on stderr) when it printed no number."""
    result = subprocess.run([str(archivist), "--data", str(folder), "count"], capture_output=True, text=True)
    try:
        return int(result.stdout.strip())
    except ValueError:
        log(f"archivist count: {result.stdout!r} {result.stderr[-1000:]!r}")
        return -1


def count_files(folder):
    return sum(len(filenames) for _, _, filenames in os.walk(folder))


def all_equal(values, expected):
    return all(value == expected for value in values)


def shown(values):
    """The distinct values, sorted, comma-separated (integers with thousands separators)."""
    distinct = sorted({value if isinstance(value, (int, float, str)) or value is None else json.dumps(value)
                       for value in values}, key=str)
    return ", ".join(f"{value:,}" if isinstance(value, int) else str(value) for value in distinct)


class SavedEnvironment:
    """The values of some environment variables, which the children inherit, put back by restore()
    or on leaving a `with` block."""

    def __init__(self, names):
        self.saved = {name: os.environ.get(name) for name in names}

    def __enter__(self):
        return self

    def __exit__(self, *exception):
        self.restore()
        return False

    def restore(self):
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def fmt_seconds(values):
    """Median and min – max in ms under a second (a refresh), else in seconds."""
    median, low, high = stats_of(values)
    unit = (lambda s: f"{s * 1e3:.1f} ms") if high < 1 else (lambda s: f"{s:.2f} s")
    return unit(median), f"{unit(low)} – {unit(high)}"


def search_section(args, count, archivist, fake_nyt):
    """The Article Search measurements (1)-(4): the lines of their table and their checks."""
    # Every folder is kept until the end: two one-file-per-document folders (a 4 KiB block or two
    # per document) and a database per repetition, and the refresh folder.
    work = work_folder("archivist-sbench-", args.workdir, count * (args.repeats * (2 * 9_000 + 3_000) + 9_000))

    server = None
    saved_environment = SavedEnvironment(("NYT_API_KEY", "NYT_API_BASE", "ARCHIVIST_PACE"))
    try:
        log(f"starting fake-nyt with {count:,} documents (seed {args.seed})...")
        server = FakeServer(fake_nyt, count, args.seed, work / "fake-nyt.stderr")
        log(f"fake-nyt at {server.base} (ready after {server.startup_seconds:.2f} s)")
        # Children (archivist and the peers) inherit these.
        os.environ.update({"NYT_API_KEY": API_KEY, "NYT_API_BASE": server.base, "ARCHIVIST_PACE": "0"})

        first, last = datetime.date.fromisoformat(FIRST_DAY), datetime.date.fromisoformat(LAST_DAY)
        _, total_hits = server.get(first, last, 0)
        if total_hits != count:
            log(f"fake-nyt: expected {count} hits over {FIRST_DAY}..{LAST_DAY}, it reports {total_hits}")
            sys.exit(1)
        plan_requests, plan_probes, plan_leaf_pages, plan_leaves = archivist_plan(server, first, last)
        log(f"archivist needs {plan_requests} requests: {plan_probes} split probes + {plan_leaf_pages} pages "
            f"of {plan_leaves} date ranges")

        rates = {"archivist": [], "files": [], "sqlite": [], "get": []}
        seconds = {name: [] for name in rates}
        rss = {name: [] for name in rates}
        server_cpu = {name: [] for name in rates}
        cpu = {name: [] for name in rates}  # (user, system) seconds
        switches = {name: [] for name in rates}
        requests = {name: [] for name in rates}
        fetched = {name: [] for name in rates}
        splits = {"files": [], "sqlite": [], "get": []}
        file_sync = []
        sizes = {}
        counted = []  # `archivist count` after each run

        def search_argv(folder, *extra):
            return [str(archivist), "--data", str(folder), "--format", "jsonl", "search", "--all", "--from", FIRST_DAY,
                    "--to", LAST_DAY, "--fields", "_id", "--limit", "0", *extra]

        def run_archivist(repeat):
            folder = work / f"archivist-{repeat}"
            run = check(measure(search_argv(folder)), "archivist search")
            summary = json.loads(run.stdout.strip().splitlines()[0])
            fetched["archivist"].append(summary.get("fetched"))
            sent = requests_sent(folder)
            requests["archivist"].append((sent, summary.get("pages")))
            counted.append(archivist_count(archivist, folder))
            sizes["archivist"] = folder_bytes(folder)
            return run

        def run_peer(mode):
            def runner(repeat):
                folder = work / f"{mode}-{repeat}"
                run = check(measure([sys.executable, "-c", PY_PEER, mode, server.base, FIRST_DAY, LAST_DAY, str(folder)]),
                            f"python peer ({mode})")
                reported = last_json_line(run.stdout, f"python peer ({mode})")
                got = reported.get("fetched")
                if mode == "files":
                    file_sync.append(reported.get("sync_seconds", 0.0))
                    on_disk = count_files(folder / "docs")
                    leftovers = count_files(folder / "tmp")
                    if on_disk != got or leftovers:
                        log(f"python files: {on_disk} files in docs/, {leftovers} in tmp/, {got} fetched")
                        got = -1
                    sizes["files"] = folder_bytes(folder)
                elif mode == "sqlite":
                    connection = sqlite3.connect(folder / "docs.db")
                    rows, distinct = connection.execute("SELECT count(*), count(DISTINCT id) FROM docs").fetchone()
                    connection.close()
                    if rows != got or distinct != got:
                        log(f"python sqlite: {rows} rows, {distinct} distinct, {got} fetched")
                        got = -1
                    sizes["sqlite"] = folder_bytes(folder)
                fetched[mode].append(got)
                requests[mode].append(reported.get("requests"))
                splits[mode].append(reported.get("splits"))
                return run
            return runner

        load_before = os.getloadavg()
        runners = [("archivist", run_archivist), ("files", run_peer("files")), ("sqlite", run_peer("sqlite")),
                   ("get", run_peer("get"))]
        # Folders are removed only at the end: deleting many files just before a run can slow it.
        for name, run, server_seconds in rotated_runs(runners, args.repeats, server):
            server_cpu[name].append(server_seconds)
            cpu[name].append((run.user, run.system))
            switches[name].append(run.switches)
            seconds[name].append(run.seconds)
            rates[name].append(count / run.seconds)
            rss[name].append(run.rss_mb)

        # (4) refresh: one untimed saved search on a fresh folder, then timed refreshes of it.
        refresh_folder = work / "refresh"
        log("saved search for the refresh (untimed)...")
        run = check(measure(search_argv(refresh_folder, "--save", "s")), "archivist search --save")
        saved_summary = json.loads(run.stdout.strip().splitlines()[0])
        refresh_seconds, refresh_rss, refresh_requests, refresh_rows = [], [], [], []
        for _ in rotated([("refresh", None)], args.repeats):
            before = requests_sent(refresh_folder)
            run = check(measure([str(archivist), "--data", str(refresh_folder), "--format", "jsonl", "refresh", "s"]),
                        "archivist refresh")
            refresh_requests.append(requests_sent(refresh_folder) - before)
            refresh_rows.append(last_json_line(run.stdout, "archivist refresh"))
            refresh_seconds.append(run.seconds)
            refresh_rss.append(run.rss_mb)
        load_after = os.getloadavg()
    finally:
        saved_environment.restore()
        if server is not None:
            server.stop()
        shutil.rmtree(work, ignore_errors=True)

    # Checks: invariants, not speed targets.
    archivist_sent = [sent for sent, _ in requests["archivist"]]
    archivist_pages = [pages for _, pages in requests["archivist"]]
    bound = math.ceil(count / PAGE_SIZE) + plan_probes

    checks = [
        (f"archivist search: fetched == {count:,} (summary) in every run", shown(fetched["archivist"]),
         all_equal(fetched["archivist"], count)),
        (f"archivist count == {count:,} after every run", shown(counted), all_equal(counted, count)),
        (f"python files: fetched == {count:,}, one file each", shown(fetched["files"]), all_equal(fetched["files"], count)),
        (f"python sqlite3: fetched == {count:,}, one row each", shown(fetched["sqlite"]), all_equal(fetched["sqlite"], count)),
        (f"GET only: fetched == {count:,}", shown(fetched["get"]), all_equal(fetched["get"], count)),
        (f"archivist requests (api-usage.json) == summary pages == the pages it needed: {plan_probes} split "
         f"probe(s) + {plan_leaf_pages:,} pages of its {plan_leaves} ranges = {plan_requests:,} (ceil(N/10) + probes = "
         f"{bound:,}; {plan_leaf_pages - math.ceil(count / PAGE_SIZE)} more from the partly filled last page of ranges)",
         f"{shown(archivist_sent)} (summary pages {shown(archivist_pages)})",
         all_equal(archivist_sent, plan_requests) and all_equal(archivist_pages, plan_requests)),
        ("refresh that finds nothing new: exactly 1 request, nothing added, in every run",
         f"{shown(refresh_requests)} (added {shown([row.get('added') for row in refresh_rows])})",
         all_equal(refresh_requests, 1) and all(row.get("added") == 0 and row.get("status") == "done" for row in refresh_rows)),
    ]
    if saved_summary.get("fetched") != count:
        checks.append((f"saved search before the refresh fetched {count:,}", shown([saved_summary.get("fetched")]), False))

    def cpu_note(name):
        user = statistics.median(u for u, _ in cpu[name])
        system = statistics.median(s for _, s in cpu[name])
        return (f"CPU {user:.2f} s user + {system:.2f} s system, {statistics.median(switches[name]):,.0f} context switches; "
                f"server CPU {statistics.median(server_cpu[name]):.2f} s")

    def secs(name):
        return f"{statistics.median(seconds[name]):.2f} s"

    peer_requests = {mode: shown(requests[mode]) for mode in splits}
    peer_splits = shown(splits["files"] + splits["sqlite"] + splits["get"])
    refresh_row = refresh_rows[-1]
    lines = [
        f"# Archivist search benchmark: fetching {count:,} documents from the fake Article Search API",
        "",
        f"{machine_stamp()} · source {source_state()} · {args.repeats} runs each, median and min – max · "
        f"fake-nyt --docs {count:,} --seed {args.seed} --from {FIRST_DAY} --to {LAST_DAY} (ready in "
        f"{server.startup_seconds:.1f} s) · Python {platform.python_version()}, SQLite {sqlite3.sqlite_version} · "
        f"data in {work.parent} · load average {load_before[0]:.2f} before, {load_after[0]:.2f} after",
        "",
        "| Measurement | Median | Min – max | Peak RSS | Notes |",
        "|---|---:|---:|---:|---|",
        table_row("(1) archivist search --all (docs/s)", *fmt_rate(rates["archivist"]), rss["archivist"],
            f"{secs('archivist')}; {shown(archivist_sent)} requests ({plan_probes} split probes, {plan_leaves} ranges of "
            f"≤ 800 hits); per page: 2 syncfs (journal, then renames + index) + api-usage.json written durably "
            f"(2 fsync); {sizes['archivist'] / 1e6:,.0f} MB on disk; {cpu_note('archivist')}"),
        table_row("(2) python: pretty JSON files, 256 buckets (docs/s)", *fmt_rate(rates["files"]), rss["files"],
            f"{secs('files')}; {peer_requests['files']} requests; tmp/ + os.replace, one os.sync() at the end "
            f"(median {statistics.median(file_sync):.2f} s), not durable per page; {sizes['files'] / 1e6:,.0f} MB "
            f"on disk; {cpu_note('files')}"),
        table_row("(3) python: sqlite3, a transaction per page (docs/s)", *fmt_rate(rates["sqlite"]), rss["sqlite"],
            f"{secs('sqlite')}; {peer_requests['sqlite']} requests; INSERT OR REPLACE, rollback journal, "
            f"synchronous=FULL (fsyncs per commit); {sizes['sqlite'] / 1e6:,.0f} MB; {cpu_note('sqlite')}"),
        table_row("(0) baseline: python GET + json.loads only (docs/s)", *fmt_rate(rates["get"]), rss["get"],
            f"{secs('get')}; {peer_requests['get']} requests; stores nothing: the fake server + HTTP + parsing; "
            f"{cpu_note('get')}"),
        table_row("(4) archivist refresh s, nothing new", *fmt_seconds(refresh_seconds), refresh_rss,
            f"{shown(refresh_requests)} request per run; range {refresh_row.get('from')}..{refresh_row.get('to')} "
            f"(the saved --to), fetched {refresh_row.get('fetched')}, added {refresh_row.get('added')}, "
            f"unchanged {refresh_row.get('unchanged')}"),
        "",
        f"archivist / python files = **{statistics.median(rates['archivist']) / statistics.median(rates['files']):.0%}**; "
        f"archivist / python sqlite3 = **{statistics.median(rates['archivist']) / statistics.median(rates['sqlite']):.0%}**; "
        f"archivist / GET only = **{statistics.median(rates['archivist']) / statistics.median(rates['get']):.0%}**",
        "",
        f"Notes. Every contestant pages through the same fake-nyt process (one request per connection: it answers "
        f"`Connection: close`), which shares the {os.cpu_count()} cores with the client; its CPU time during each run is "
        f"in the notes, and row (0) is what fetching alone costs a Python client. Durability differs: archivist makes "
        f"each page durable before the next request (journal + syncfs, renames + index + syncfs) and records every "
        f"request in api-usage.json with fsyncs, so a crash loses at most the page in flight; the Python file peer "
        f"syncs once at the end (a crash can lose everything fetched); sqlite3 fsyncs each page's transaction. "
        f"archivist splits a range of more than 1,000 hits into parts of about 800 hits (here {plan_probes} probe "
        f"request(s) whose page 0 is not used); the peers halve the range instead ({peer_splits} probes). Requests: "
        f"`requests_per_day` of api-usage.json summed; the peers count their own. Whole-process wall time, peak RSS "
        f"from wait4(2), global sync before each run, order rotating. CPU and context switches: the child's user and "
        f"system seconds and voluntary + involuntary switches (the rusage of its wait4), medians; "
        f"they vary less than wall time on a shared machine. archivist's HTTP goes through URLSession "
        f"(FoundationNetworking: libcurl driven from libdispatch threads), which hands each request between threads "
        f"many times: its switch count is the one to watch when its wall time swings with the machine's load. Creating "
        f"files costs more system time on a file system where other processes create and delete many files (ext4 "
        f"skips recently deleted inodes when it allocates one): compare the system CPU of (1) and (2), which create a "
        f"file per document, with (0) and (3), which do not; when it is several seconds, the wall times of (1) and "
        f"(2) measure the file system's state more than the contestant.",
        "",
    ]
    return lines, checks



def peak_rss_of_time(stderr, fallback_mb):
    """The peak RSS in MB (KiB / 1024, as benchkit's measure) that `/usr/bin/time -v` wrote at the end of
    stderr, or fallback_mb (wait4's) when it wrote none."""
    found = re.findall(r"Maximum resident set size \(kbytes\): (\d+)", stderr)
    return int(found[-1]) / 1024.0 if found else fallback_mb


def rotated_runs(runners, repeats, server, label=""):
    """Runs each of `runners` (name, runner) `repeats` times in benchkit's rotating order; yields
    each (name, run, seconds of server CPU it took)."""
    for repeat, name, runner in rotated(runners, repeats, label):
        cpu_before = server.cpu_seconds()
        run = runner(repeat)
        yield name, run, server.cpu_seconds() - cpu_before


def archive_summary(stdout):
    """The last JSON object with a "months" key that `archivist archive` printed, or {}."""
    for line in reversed(stdout.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                value = json.loads(line)
            except ValueError:
                continue
            if isinstance(value, dict) and "months" in value:
                return value
    return {}


def archive_section(args, docs, archivist, fake_nyt):
    """The Archive API measurements (A)-(C) on one month of `docs` documents: the lines of their
    table and their checks (the issue's targets among them)."""
    month_name = f"{ARCHIVE_YEAR}-{ARCHIVE_MONTH:02d}"
    # Kept until the end: a one-file-per-document folder for archivist and one for the Python peer
    # per repetition (a 4 KiB block or two per document, the index and journal besides).
    work = work_folder("archivist-abench-", args.workdir, docs * args.repeats * 2 * 10_000)
    use_time = os.access(TIME_BINARY, os.X_OK)
    if not use_time:
        log(f"{TIME_BINARY} not found: archivist's peak RSS is read from wait4(2) instead")
    server = None
    with SavedEnvironment(("NYT_API_KEY", "NYT_API_BASE", "ARCHIVIST_PACE")):
        try:
            log(f"starting fake-nyt with {docs:,} documents in {month_name} (seed {args.seed})...")
            server = FakeServer(fake_nyt, docs, args.seed, work / "fake-nyt.stderr", ARCHIVE_FIRST_DAY, ARCHIVE_LAST_DAY,
                                ["--full-crops", str(ARCHIVE_FULL_CROPS)])
            log(f"fake-nyt at {server.base} (ready after {server.startup_seconds:.2f} s)")
            os.environ.update({"NYT_API_KEY": API_KEY, "NYT_API_BASE": server.base, "ARCHIVIST_PACE": "0"})
            body_bytes, month_hits, month_docs = server.month(ARCHIVE_YEAR, ARCHIVE_MONTH)
            log(f"{month_name}: {month_docs:,} documents (hits {month_hits:,}), body {body_bytes / 1e6:.1f} MB")

            names = ("archivist", "get", "files")
            seconds = {name: [] for name in names}
            rss = {name: [] for name in names}
            cpu = {name: [] for name in names}
            server_cpu = {name: [] for name in names}
            got = {name: [] for name in names}  # documents stored (archivist: added; files: files on disk)
            summaries, counted, file_sync, peer_phases = [], [], [], []
            sizes = {}

            def run_archivist(repeat):
                folder = work / f"archivist-{repeat}"
                argv = [str(archivist), "--data", str(folder), "--format", "jsonl", "archive", month_name, "--pace", "0"]
                run = check(measure(([TIME_BINARY, "-v"] if use_time else []) + argv), "archivist archive")
                run.rss_mb = peak_rss_of_time(run.stderr, run.rss_mb)
                summary = archive_summary(run.stdout)
                if not summary:
                    log(f"archivist archive: no summary line in its output:\n{run.stdout[-2000:]}")
                summaries.append(summary)
                got["archivist"].append(summary.get("added"))
                counted.append(archivist_count(archivist, folder))
                sizes["archivist"] = folder_bytes(folder)
                return run

            def run_peer(mode):
                def runner(repeat):
                    folder = work / f"{mode}-{repeat}"
                    run = check(measure([sys.executable, "-c", PY_ARCHIVE_PEER, mode, server.base, str(ARCHIVE_YEAR),
                                             str(ARCHIVE_MONTH), str(folder)]), f"python archive peer ({mode})")
                    reported = last_json_line(run.stdout, f"python archive peer ({mode})")
                    stored = reported.get("docs") if reported.get("distinct") == reported.get("docs") else -1
                    if mode == "files":
                        on_disk = count_files(folder / "docs")
                        if on_disk != reported.get("written") or on_disk != reported.get("docs"):
                            log(f"python archive files: {on_disk} files, {reported.get('written')} written, "
                                f"{reported.get('docs')} documents")
                            stored = -1
                        file_sync.append(reported.get("sync_seconds", 0.0))
                        sizes["files"] = folder_bytes(folder)
                    else:
                        peer_phases.append((reported.get("download_seconds", 0.0), reported.get("parse_seconds", 0.0)))
                    got[mode].append(stored)
                    return run
                return runner

            load_before = os.getloadavg()
            runners = [("archivist", run_archivist), ("get", run_peer("get")), ("files", run_peer("files"))]
            for name, run, server_seconds in rotated_runs(runners, args.repeats, server, "archive: "):
                server_cpu[name].append(server_seconds)
                cpu[name].append((run.user, run.system))
                seconds[name].append(run.seconds)
                rss[name].append(run.rss_mb)
            load_after = os.getloadavg()
        finally:
            if server is not None:
                server.stop()
            shutil.rmtree(work, ignore_errors=True)

    body_mb = body_bytes / 1e6
    rates = {name: [docs / value for value in seconds[name]] for name in names}
    throughput = {name: [body_mb / value for value in seconds[name]] for name in names}

    def rate_cells(name):
        median, spread = fmt_rate(rates[name])
        low, high = min(throughput[name]), max(throughput[name])
        return f"{median} docs/s · {statistics.median(throughput[name]):.1f} MB/s", f"{spread} · {low:.1f} – {high:.1f} MB/s"

    def notes(name):
        user = statistics.median(u for u, _ in cpu[name])
        system = statistics.median(s for _, s in cpu[name])
        return (f"{statistics.median(seconds[name]):.2f} s; CPU {user:.2f} s user + {system:.2f} s system; "
                f"server CPU {statistics.median(server_cpu[name]):.2f} s")

    ratio = statistics.median(rates["archivist"]) / statistics.median(rates["get"])
    # RSS is in MB of 2^20 bytes (KiB / 1024, as everywhere in these benchmarks): the target too.
    rss_target = ARCHIVE_RSS_FACTOR * body_bytes / 2**20 + ARCHIVE_RSS_EXTRA_MB
    archivist_rss = max(rss["archivist"])
    failed = [summary.get("failed") for summary in summaries]
    download, parse = (statistics.median(d for d, _ in peer_phases), statistics.median(p for _, p in peer_phases))
    lines = [
        f"## Archive API: one month of {docs:,} documents ({month_name}, {body_mb:.1f} MB)",
        "",
        f"{datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} · {args.repeats} run{'s' if args.repeats != 1 else ''} each, median and "
        f"min – max · fake-nyt --docs {docs:,} --seed {args.seed} --from {ARCHIVE_FIRST_DAY} --to {ARCHIVE_LAST_DAY} "
        f"--full-crops {ARCHIVE_FULL_CROPS} "
        f"(ready in {server.startup_seconds:.1f} s): /svc/archive/v1/{ARCHIVE_YEAR}/{ARCHIVE_MONTH}.json is "
        f"{body_bytes:,} bytes, hits {month_hits:,}, {month_docs:,} docs · data in {work.parent} · load average "
        f"{load_before[0]:.2f} before, {load_after[0]:.2f} after",
        "",
        "| Measurement | Median | Min – max | Peak RSS | Notes |",
        "|---|---:|---:|---:|---|",
        table_row(f"(A) archivist archive {month_name} --pace 0, durable", *rate_cells("archivist"), rss["archivist"],
                  f"{notes('archivist')}; peak RSS from {TIME_BINARY + ' -v' if use_time else 'wait4(2)'} (target < "
                  f"{ARCHIVE_RSS_FACTOR} x body + {ARCHIVE_RSS_EXTRA_MB:.0f} MB = {rss_target:.0f} MB); added "
                  f"{shown(got['archivist'])}; {sizes['archivist'] / 1e6:,.0f} MB on disk"),
        table_row("(B) python: urllib + json.loads only", *rate_cells("get"), rss["get"],
                  f"{notes('get')}; stores nothing (download {download:.2f} s + json.loads {parse:.2f} s, medians)"),
        table_row("(C) python: + a pretty JSON file per document, one os.sync() at the end", *rate_cells("files"),
                  rss["files"],
                  f"{notes('files')}; os.open/os.write/os.close into 256 buckets, no rename, no fsync per file, one "
                  f"os.sync() at the end (median {statistics.median(file_sync):.2f} s): not durable per document; "
                  f"{sizes['files'] / 1e6:,.0f} MB on disk"),
        "",
        f"archivist / python GET + json.loads = **{ratio:.0%}** (target ≥ {ARCHIVE_RATE_TARGET:.0%}); archivist / python "
        f"files = **{statistics.median(rates['archivist']) / statistics.median(rates['files']):.0%}**; archivist peak RSS "
        f"**{archivist_rss:.0f} MB** = {archivist_rss / (body_bytes / 2**20):.1f} x the body (target < {rss_target:.0f} MB)",
        "",
        f"Notes. One request each: the whole month in one body. Rates are documents (and MB of the body, 10^6 bytes) "
        f"per second of the whole process, start to exit; peak RSS in MB of 2^20 bytes. archivist stores every "
        f"document durably (it reports success only after its writes are synced) and records the month as complete; "
        f"the file peer syncs once at the end. The fake server runs on the same {os.cpu_count()} cores."
        + f" Documents average {body_bytes / max(1, month_docs):,.0f} bytes: --full-crops {ARCHIVE_FULL_CROPS} gives that share "
        f"of the 2019-shaped documents with an image the full 68 crops the API of 2018-2019 lists (real months of "
        f"those years run to 90 MB).",
        "",
    ]
    checks = [
        (f"fake-nyt {month_name}: hits == documents == {docs:,}", f"hits {month_hits:,}, {month_docs:,} docs",
         month_hits == docs and month_docs == docs),
        (f"fake-nyt {month_name}: the body is at least {ARCHIVE_MIN_BYTES / 1e6:.0f} MB (the issue's month)",
         f"{body_mb:.1f} MB", body_bytes >= ARCHIVE_MIN_BYTES or docs != ARCHIVE_DOCS),
        (f"archivist archive: added == {docs:,} and failed == [] in every run (fresh folders)",
         f"added {shown(got['archivist'])}, failed {shown(failed)}",
         all_equal(got["archivist"], docs) and all_equal(failed, [])),
        (f"archivist count == {docs:,} after every archive run", shown(counted), all_equal(counted, docs)),
        (f"python GET only: {docs:,} distinct documents", shown(got["get"]), all_equal(got["get"], docs)),
        (f"python files: {docs:,} files", shown(got["files"]), all_equal(got["files"], docs)),
        (f"target: archivist archive ≥ {ARCHIVE_RATE_TARGET:.0%} of python GET + json.loads (docs/s, medians)",
         f"{ratio:.0%}", ratio >= ARCHIVE_RATE_TARGET),
        (f"target: archivist peak RSS < {ARCHIVE_RSS_FACTOR} x body + {ARCHIVE_RSS_EXTRA_MB:.0f} MB = {rss_target:.0f} MB",
         f"{archivist_rss:.0f} MB", archivist_rss < rss_target),
    ]
    return lines, checks


def main():
    def more(parser):
        parser.add_argument("--archive-only", action="store_true",
                            help="only the Archive API section (writes bench/out/search-archive.md)")
        parser.add_argument("--archive-docs", type=int, default=ARCHIVE_DOCS,
                            help=f"documents of the archive section's month (default {ARCHIVE_DOCS})")

    parser, args, count = parse_arguments("Archivist search (fetch into the store) benchmark (prints a Markdown table).",
                                          10_000, 3_000, "documents the fake server holds", 3, "runs of each measurement",
                                          seed_help="fake server's generator seed", more=more)
    if count <= 0 or args.repeats <= 0 or args.archive_docs <= 0:
        parser.error("--count, --repeats and --archive-docs must be positive")

    archivist, fake_nyt = binaries(args.scratch_path, args.skip_build, ("archivist", "fake-nyt"), network=True)
    if args.archive_only:
        lines = [
            "# Archivist archive benchmark: fetching a month from the fake Archive API",
            "",
            f"{platform.system()} {platform.machine()}, {os.cpu_count()} cores · source {source_state()} · "
            f"Python {platform.python_version()}",
            "",
        ]
        archive_lines, checks = archive_section(args, args.archive_docs, archivist, fake_nyt)
        return publish(lines + archive_lines, checks, "search-archive.md")
    lines, checks = search_section(args, count, archivist, fake_nyt)
    archive_lines, archive_checks = archive_section(args, args.archive_docs, archivist, fake_nyt)
    return publish(lines + archive_lines, checks + archive_checks, "search.md")


if __name__ == "__main__":
    sys.exit(main())
