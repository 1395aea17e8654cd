#!/usr/bin/env python3
"""Archivist benchmark: import throughput against the raw file system and SQLite, and open time.

Builds `archivist` and `archivist-bench` in release mode, generates N NYT-shaped documents once
(seeded, so every run imports the same bytes), then, each on a fresh folder and repeated
(3 times by default), measures:

  (a) archivist import   `archivist --data DIR import FILE` (durable batches), docs/s
  (b) raw file system    `archivist-bench rawfs`: the same documents parsed, pretty-printed, written
                         to tmp/, renamed into docs/<bb>/, one syncfs at the end (no per-file fsync),
                         docs/s -- the ceiling for one-file-per-document on this file system
  (c) sqlite3            the same documents in one transaction into docs(id TEXT PRIMARY KEY,
                         body TEXT) from a prepared SQL script, docs/s (the sqlite3 process)
  (d) open + stats       `archivist --data DIR stats` on the N-document folder: wall time and
                         peak RSS; Python loading DIR/index.jsonl into a dict as a peer

Every number is the wall time of one child process (start to exit, so process start-up and the
final sync count), with its peak RSS from wait4(2). A global sync(2) runs before each timed run so
no run pays for the previous one's dirty pages, the order of (a), (b), (c) rotates between
repetitions, and no folder is deleted until the end (deleting many files just before a run can
slow it). The load average is printed: on a shared machine, compare only numbers of one run.

Prints a Markdown table with median and min-max, the import/rawfs ratio and PASS/FAIL for the
targets, writes it to bench/out/latest.md, and exits 1 when a target fails.

Usage:
  python3 bench/run.py                      # 100,000 documents
  python3 bench/run.py --quick              # 10,000 documents
  python3 bench/run.py --count 20000 --repeats 3 --seed 42 [--scratch-path PATH] [--workdir DIR]

Standard library only.
"""

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"

IMPORT_RATIO_TARGET = 0.50  # archivist import docs/s >= 50% of the raw file system's
OPEN_SECONDS_TARGET = 0.5  # open + stats of the folder
OPEN_RSS_TARGET_MB = 150.0


def log(message):
    print(message, file=sys.stderr, flush=True)


class Run:
    """One finished child process: wall seconds, peak RSS, exit code, output."""

    def __init__(self, seconds, rss_mb, code, stdout, stderr):
        self.seconds = seconds
        self.rss_mb = rss_mb
        self.code = code
        self.stdout = stdout
        self.stderr = stderr


def measure(argv, stdin_path=None, cwd=None):
    """Runs argv, returning its wall time and its own peak RSS (wait4 on that child only)."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, cwd=cwd)
            _, status, usage = os.wait4(proc.pid, 0)
            seconds = time.perf_counter() - start
        finally:
            if stdin_path:
                stdin.close()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        # ru_maxrss is in KiB on Linux (bytes on macOS).
        rss_mb = usage.ru_maxrss / (1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0)
        return Run(seconds, rss_mb, proc.returncode,
                   out.read().decode("utf-8", "replace"), err.read().decode("utf-8", "replace"))


def check(run, what):
    if run.code != 0:
        log(f"{what} failed with exit code {run.code}\n{run.stderr[-2000:]}")
        sys.exit(1)
    return run


def last_json_line(text, what):
    for line in reversed(text.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            return json.loads(line)
    log(f"{what}: no JSON line in its output:\n{text[-2000:]}")
    sys.exit(1)


def parse_arguments(description, count, quick, count_help, repeats, repeats_help, seed_help="generator seed", more=None,
                    seed=42):
    """Parses the options every benchmark takes, with `more(parser)` adding the script's own after
    --repeats. Returns the parser, the arguments and the document count (`quick` with --quick)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--count", type=int, default=count, help=f"{count_help} (default {count})")
    parser.add_argument("--quick", action="store_true", help=f"{quick} documents")
    parser.add_argument("--repeats", type=int, default=repeats, help=f"{repeats_help} (default {repeats})")
    if more:
        more(parser)
    parser.add_argument("--seed", type=int, default=seed, help=f"{seed_help} (default {seed})")
    parser.add_argument("--scratch-path", help="SwiftPM scratch path (default .build)")
    parser.add_argument("--workdir", help="folder for the temporary data (default: the system temp folder)")
    parser.add_argument("--skip-build", action="store_true", help="use the binaries already built")
    args = parser.parse_args()
    return parser, args, quick if args.quick else args.count


def binaries(scratch_path, skip_build, products, network=False):
    """Builds `products` in release mode (unless skip_build); returns their paths, in order.

    With `network`, also libArchivistNetwork.so, which archivist loads from its own folder when it
    fetches (search, refresh), and checks that it is there."""
    extra = ["--scratch-path", scratch_path] if scratch_path else []
    built = list(products) + (["ArchivistNetwork"] if network else [])
    if not skip_build:
        for product in built:
            log(f"building {product} (release)...")
            if subprocess.run(["swift", "build", "-c", "release", "--product", product] + extra, cwd=ROOT,
                              stdout=sys.stderr).returncode != 0:
                log(f"swift build --product {product} failed")
                sys.exit(1)
    bin_path = subprocess.run(["swift", "build", "-c", "release", "--show-bin-path"] + extra, cwd=ROOT, check=True,
                              capture_output=True, text=True).stdout.strip().splitlines()[-1]
    paths = [Path(bin_path) / product for product in products]
    for binary in paths + ([Path(bin_path) / "libArchivistNetwork.so"] if network else []):
        if not binary.exists():
            log(f"{binary}: not built")
            sys.exit(1)
    return paths


def work_folder(prefix, parent, needed):
    """A fresh temporary folder in `parent` (None: the system temp folder; created when missing);
    exits 1 when its file system has less than 1.2 x `needed` bytes free."""
    if parent:
        Path(parent).mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
    free = shutil.disk_usage(work).free
    if free < needed * 1.2:
        shutil.rmtree(work, ignore_errors=True)
        log(f"{work.parent}: {free / 1e9:.1f} GB free, about {needed / 1e9:.1f} GB needed (use --workdir)")
        sys.exit(1)
    return work


def source_state():
    """The commit measured, with -dirty when tracked files differ from it (read-only git commands)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT, capture_output=True).returncode != 0
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def sql_quote(text):
    return "'" + text.replace("'", "''") + "'"


def prepare_sqlite_script(jsonl_path, script_path):
    """One transaction of INSERTs: id = the document's _id, body = its JSON line as given.

    Returns the (id, body) of a few documents to verify the database against."""
    samples = []
    count = 0
    with open(jsonl_path, "r", encoding="utf-8") as source, open(script_path, "w", encoding="utf-8") as script:
        script.write("PRAGMA journal_mode=DELETE;\nPRAGMA synchronous=FULL;\n")
        script.write("CREATE TABLE docs(id TEXT PRIMARY KEY, body TEXT);\nBEGIN;\n")
        for line in source:
            body = line.rstrip("\n")
            if not body.strip():
                continue
            doc_id = json.loads(body)["_id"]
            script.write(f"INSERT INTO docs VALUES({sql_quote(doc_id)},{sql_quote(body)});\n")
            if count % 9973 == 0 or "'" in doc_id:
                samples.append((doc_id, body))
            count += 1
        script.write("COMMIT;\n")
    return count, samples


def verify_sqlite(db_path, count, samples):
    """Checks the row count and that sampled rows hold the exact id and body."""
    total = subprocess.run(["sqlite3", str(db_path), "SELECT count(*), count(DISTINCT id) FROM docs;"],
                           check=True, capture_output=True, text=True).stdout.strip()
    if total != f"{count}|{count}":
        log(f"sqlite3: expected {count} distinct rows, found {total}")
        sys.exit(1)
    for doc_id, body in samples[:20]:
        stored = subprocess.run(["sqlite3", str(db_path), f"SELECT body FROM docs WHERE id = {sql_quote(doc_id)};"],
                                check=True, capture_output=True, text=True, encoding="utf-8").stdout
        if stored.rstrip("\n") != body:
            log(f"sqlite3: the body stored for {doc_id!r} differs from the document")
            sys.exit(1)


PY_LOAD_INDEX = r"""
import json, sys
index = {}
with open(sys.argv[1], "rb") as f:
    for line in f:
        if line.strip():
            entry = json.loads(line)
            if "removed_at" in entry:
                index.pop(entry["id"], None)
            else:
                index[entry["id"]] = entry
print(json.dumps({"documents": len(index)}))
"""


def settle():
    """Flushes everything dirty so the next timed run does not pay for earlier writes."""
    os.sync()


def stats_of(values):
    return statistics.median(values), min(values), max(values)


def fmt_rate(values):
    median, low, high = stats_of(values)
    return f"{median:,.0f}", f"{low:,.0f} – {high:,.0f}"


def fmt_seconds(values):
    median, low, high = stats_of(values)
    return f"{median:.3f} s", f"{low:.3f} – {high:.3f} s"


def table_row(name, median, spread, rss_values, note):
    """A row of the measurement tables: name, median, min – max, peak RSS (the largest), notes."""
    return f"| {name} | {median} | {spread} | {max(rss_values):.1f} MB | {note} |"


def main():
    parser, args, count = parse_arguments("Archivist import and open benchmark (prints a Markdown table).",
                                          100_000, 10_000, "documents to generate and import", 3, "runs of each measurement")
    if count <= 0 or args.repeats <= 0:
        parser.error("--count and --repeats must be positive")
    if shutil.which("sqlite3") is None:
        log("sqlite3 is not installed (apt-get install sqlite3)")
        sys.exit(1)

    archivist, bench = binaries(args.scratch_path, args.skip_build, ("archivist", "archivist-bench"))
    # Every folder is kept until the end: about 4 KiB blocks x N per file-per-document folder.
    work = work_folder("archivist-bench-", args.workdir, count * args.repeats * (2 * 5_000 + 3_000) + count * 5_000)
    try:
        jsonl = work / "docs.jsonl"
        log(f"generating {count:,} documents (seed {args.seed})...")
        generated = last_json_line(check(measure([str(bench), "generate", "--count", str(count), "--seed", str(args.seed),
                                                  "--out", str(jsonl)]), "generate").stdout, "generate")
        log("preparing the SQLite script...")
        script = work / "import.sql"
        sql_count, samples = prepare_sqlite_script(jsonl, script)
        if sql_count != count:
            log(f"expected {count} documents in {jsonl}, found {sql_count}")
            sys.exit(1)

        results = {"archivist": [], "rawfs": [], "sqlite": []}
        rss = {"archivist": [], "rawfs": [], "sqlite": [], "stats": [], "python": []}
        open_seconds = {"stats": [], "python": []}
        kept = None  # the last archivist folder, for the open measurements
        raw_sync = []  # seconds of rawfs's final syncfs
        load_before = os.getloadavg()

        def run_archivist(repeat):
            nonlocal kept
            folder = work / f"archivist-{repeat}"
            run = check(measure([str(archivist), "--data", str(folder), "import", str(jsonl)]), "archivist import")
            summary = last_json_line(run.stdout, "archivist import")
            if summary.get("added") != count or summary.get("failed", 0) != 0:
                log(f"archivist import: expected {count} added and none failed, got {summary}")
                sys.exit(1)
            kept = folder
            return run

        def run_rawfs(repeat):
            run = check(measure([str(bench), "rawfs", "--input", str(jsonl), "--dir", str(work / f"rawfs-{repeat}")]),
                        "rawfs")
            reported = last_json_line(run.stdout, "rawfs")
            raw_sync.append(float(reported.get("sync_seconds", 0)))
            if reported.get("docs") != count:
                log(f"rawfs: expected {count} documents, got {reported}")
                sys.exit(1)
            return run

        def run_sqlite(repeat):
            db = work / f"sqlite-{repeat}.db"
            run = check(measure(["sqlite3", "-bail", str(db)], stdin_path=script), "sqlite3")
            verify_sqlite(db, count, samples)
            return run

        runners = [("archivist", run_archivist), ("rawfs", run_rawfs), ("sqlite", run_sqlite)]
        for repeat in range(1, args.repeats + 1):
            # The order rotates, so drift on a shared machine does not favour one contestant. Folders
            # are removed only at the end: deleting many files just before a run can slow it.
            shift = (repeat - 1) % len(runners)
            for name, runner in runners[shift:] + runners[:shift]:
                settle()
                log(f"[{repeat}/{args.repeats}] {name}...")
                run = runner(repeat)
                results[name].append(count / run.seconds)
                rss[name].append(run.rss_mb)

        # (d) open time of the N-document folder (warm page cache, as right after an import).
        settle()
        for repeat in range(1, args.repeats + 1):
            log(f"[{repeat}/{args.repeats}] archivist stats / python index load...")
            run = check(measure([str(archivist), "--data", str(kept), "stats"]), "archivist stats")
            stats = last_json_line(run.stdout, "archivist stats")
            if stats.get("documents") != count:
                log(f"archivist stats: expected {count} documents, got {stats}")
                sys.exit(1)
            open_seconds["stats"].append(run.seconds)
            rss["stats"].append(run.rss_mb)
            run = check(measure([sys.executable, "-c", PY_LOAD_INDEX, str(kept / "index.jsonl")]), "python index load")
            if last_json_line(run.stdout, "python").get("documents") != count:
                log("python index load: wrong count")
                sys.exit(1)
            open_seconds["python"].append(run.seconds)
            rss["python"].append(run.rss_mb)
        index_mb = (kept / "index.jsonl").stat().st_size / 1e6
        load_after = os.getloadavg()
    finally:
        shutil.rmtree(work, ignore_errors=True)

    # Report.
    import_ratio = statistics.median(results["archivist"]) / statistics.median(results["rawfs"])
    stats_median = statistics.median(open_seconds["stats"])
    stats_rss = max(rss["stats"])
    checks = [
        (f"archivist import ≥ {IMPORT_RATIO_TARGET:.0%} of rawfs", f"{import_ratio:.0%}", import_ratio >= IMPORT_RATIO_TARGET),
        (f"open + stats < {OPEN_SECONDS_TARGET} s (median)", f"{stats_median:.3f} s", stats_median < OPEN_SECONDS_TARGET),
        (f"open + stats peak RSS < {OPEN_RSS_TARGET_MB:.0f} MB (max)", f"{stats_rss:.1f} MB", stats_rss < OPEN_RSS_TARGET_MB),
    ]

    lines = [
        f"# Archivist benchmark: {count:,} documents",
        "",
        f"{datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} · {platform.system()} {platform.machine()}, "
        f"{os.cpu_count()} cores · {args.repeats} runs each, median and min – max · seed {args.seed} · "
        f"{generated.get('bytes', 0) / count:,.0f} bytes/doc as JSON Lines · data in {work.parent} · "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after",
        "",
        "| Measurement | Median | Min – max | Peak RSS | Notes |",
        "|---|---:|---:|---:|---|",
        table_row("(a) archivist import (docs/s)", *fmt_rate(results["archivist"]), rss["archivist"],
            "`archivist --data DIR import FILE`, durable batches"),
        table_row("(b) raw file system (docs/s)", *fmt_rate(results["rawfs"]), rss["rawfs"],
            f"parse, pretty, write tmp/, rename into docs/<bb>/, one syncfs (median {statistics.median(raw_sync):.2f} s)"),
        table_row("(c) sqlite3, one transaction (docs/s)", *fmt_rate(results["sqlite"]), rss["sqlite"],
            "`docs(id TEXT PRIMARY KEY, body TEXT)`, INSERT script in BEGIN/COMMIT"),
        table_row("(d) archivist open + stats", *fmt_seconds(open_seconds["stats"]), rss["stats"],
            f"`archivist --data DIR stats`, {count:,} documents, warm cache"),
        table_row("(d) python: index.jsonl into a dict", *fmt_seconds(open_seconds["python"]), rss["python"],
            f"peer: json.loads of every line, {index_mb:,.1f} MB index"),
        "",
        f"archivist import / rawfs = **{import_ratio:.0%}**; archivist import / sqlite3 = "
        f"**{statistics.median(results['archivist']) / statistics.median(results['sqlite']):.0%}**",
        "",
    ]
    return publish(lines, checks, "latest.md")


def publish(lines, checks, name):
    """Appends the PASS/FAIL table of `checks` to `lines`, prints the whole table, writes it to
    bench/out/NAME, and returns the exit status (1 when a target failed)."""
    lines = lines + [
        "| Target | Measured | Result |",
        "|---|---:|---|",
    ]
    lines += [f"| {target} | {value} | {'PASS' if ok else 'FAIL'} |" for target, value, ok in checks]
    table = "\n".join(lines) + "\n"
    print(table, end="")
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / name).write_text(table, encoding="utf-8")
    log(f"written to {OUT / name}")
    return 0 if all(ok for _, _, ok in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
