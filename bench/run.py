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

import os
import shutil
import statistics
import subprocess
import sys

from benchkit import (binaries, check, check_sqlite_rows, expect_imported, fmt_rate, fmt_seconds, generate, json_lines,
                      last_json_line, log, machine_stamp, measure, parse_arguments, publish, rawfs, require_programs,
                      rotated, settle, sql_quote, table_row, work_folder)

IMPORT_RATIO_TARGET = 0.50  # archivist import docs/s >= 50% of the raw file system's
OPEN_SECONDS_TARGET = 0.5  # open + stats of the folder
OPEN_RSS_TARGET_MB = 150.0


def prepare_sqlite_script(jsonl_path, script_path):
    """One transaction of INSERTs: id = the document's _id, body = its JSON line as given.

    Returns the (id, body) of a few documents to verify the database against."""
    samples = []
    count = 0
    with open(script_path, "w", encoding="utf-8") as script:
        script.write("PRAGMA journal_mode=DELETE;\nPRAGMA synchronous=FULL;\n")
        script.write("CREATE TABLE docs(id TEXT PRIMARY KEY, body TEXT);\nBEGIN;\n")
        for body, document in json_lines(jsonl_path):
            doc_id = document["_id"]
            script.write(f"INSERT INTO docs VALUES({sql_quote(doc_id)},{sql_quote(body)});\n")
            if count % 9973 == 0 or "'" in doc_id:
                samples.append((doc_id, body))
            count += 1
        script.write("COMMIT;\n")
    return count, samples


def verify_sqlite(db_path, count, samples):
    """Checks the row count and that sampled rows hold the exact id and body."""
    check_sqlite_rows(db_path, count)
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


def main():
    parser, args, count = parse_arguments("Archivist import and open benchmark (prints a Markdown table).",
                                          100_000, 10_000, "documents to generate and import", 3, "runs of each measurement")
    if count <= 0 or args.repeats <= 0:
        parser.error("--count and --repeats must be positive")
    require_programs("sqlite3")

    archivist, bench = binaries(args.scratch_path, args.skip_build, ("archivist", "archivist-bench"))
    # Every folder is kept until the end: about 4 KiB blocks x N per file-per-document folder.
    work = work_folder("archivist-bench-", args.workdir, count * args.repeats * (2 * 5_000 + 3_000) + count * 5_000)
    try:
        jsonl = work / "docs.jsonl"
        _, generated = generate(bench, count, args.seed, jsonl)
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
            run = measure([str(archivist), "--data", str(folder), "import", str(jsonl)])
            expect_imported(run, count)
            kept = folder
            return run

        def run_rawfs(repeat):
            run, reported = rawfs(bench, jsonl, work / f"rawfs-{repeat}", count)
            raw_sync.append(float(reported.get("sync_seconds", 0)))
            return run

        def run_sqlite(repeat):
            db = work / f"sqlite-{repeat}.db"
            run = check(measure(["sqlite3", "-bail", str(db)], stdin_path=script), "sqlite3")
            verify_sqlite(db, count, samples)
            return run

        runners = [("archivist", run_archivist), ("rawfs", run_rawfs), ("sqlite", run_sqlite)]
        # Folders are removed only at the end: deleting many files just before a run can slow it.
        for repeat, name, runner in rotated(runners, args.repeats):
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
        f"{machine_stamp()} · {args.repeats} runs each, median and min – max · seed {args.seed} · "
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


if __name__ == "__main__":
    sys.exit(main())
