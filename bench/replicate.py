#!/usr/bin/env python3
"""`archivist replicate` next to `psql \\copy`: the initial load, and a follower's lag (issue 27's targets).

In one run, on one PostgreSQL server this script starts (initdb and pg_ctl in a temporary folder,
as the postgres user, on a Unix socket; max_wal_size 8GB and track_commit_timestamp on for both
peers alike):

  1. the peer: `psql -c "\\copy raw FROM FILE"` of the same documents as JSON Lines into a
     one-column jsonb table (csv format with quote and delimiter bytes that JSON never holds, so
     each line is one value), then `CREATE INDEX ... USING gin (doc jsonb_path_ops)`, timed apart;
  2. `archivist replicate` of the data folder into an empty database: wall time, peak RSS (wait4),
     documents per second, next to the peer's copy and copy + index;
  3. `archivist replicate --follow` while a writer commits about `--rate` (500) changes a second
     for `--seconds` (20): each second, an `import` of rate/10 documents every 100 ms. The lag of a
     change is the commit time of its row in PostgreSQL (`pg_xact_commit_timestamp(xmin)`) minus the
     time the folder committed it (`updated_at`): median and p99 over every change;
  4. the follower's CPU time over `--idle` (10) seconds with no writer;
  5. the shell over the copy (issue 28): each of bench/scale.py's one-shot questions asked of
     `archivist --data postgresql://.../copy` as a whole process, next to `psql -c` running the best
     SQL written by hand for the same question on the same server (the typed columns, `terms`, the
     same BM25 order for the ranked find), median of `--repeats` (5), answers compared; and the time
     of the shell's first answer (`--interactive` reading one question from a pipe, start to exit).

Usage:
  python3 bench/replicate.py --folder DIR --jsonl FILE     # an existing folder and the same documents
  python3 bench/replicate.py --count 100000                # generate (seed 3) and import into --workdir
  python3 bench/replicate.py ... [--binary PATH] [--skip-build] [--rate 500] [--seconds 20] [--idle 10]

Standard library only (plus PostgreSQL 15's server and psql: scripts/install-deps). Markdown table
on stdout and in bench/out/replicate.md.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchkit import binaries, check, cpu_seconds, generate, log, measure, publish, source_state

LOAD_RATIO = 0.5  # initial load at least half the rate of psql \copy + index build
LOAD_RSS_MB = 300.0
LAG_MEDIAN_MS = 500.0
LAG_P99_MS = 2000.0
COPY_RATIO = 1.5  # each one-shot question against the copy within 1.5x of psql with hand-written SQL
FIRST_ANSWER_MS = 50.0  # the shell's first answer over the copy
TREND_WORDS = ["election", "budget", "museum"]  # bench/scale.py's trend series


def pg_binaries():
    base = Path("/usr/lib/postgresql")
    for version in sorted((int(p.name) for p in base.iterdir() if p.name.isdigit()), reverse=True) if base.exists() else []:
        folder = base / str(version) / "bin"
        if (folder / "initdb").exists():
            return folder
    log("no PostgreSQL server binaries under /usr/lib/postgresql (scripts/install-deps)")
    sys.exit(1)


def as_postgres(argv):
    return (["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []) + argv


class Server:
    def __init__(self, workdir):
        self.bin = pg_binaries()
        self.root = tempfile.mkdtemp(prefix="archivist-pg-bench-", dir="/tmp")
        os.chmod(self.root, 0o755)
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        subprocess.run(as_postgres([str(self.bin / "initdb"), "-D", self.root + "/data", "-U", "postgres",
                                    "--auth-local=trust", "-E", "UTF8", "--locale=C.UTF-8"]),
                       check=True, stdout=subprocess.DEVNULL)
        options = (f"-c listen_addresses='' -c unix_socket_directories='{self.root}' -c max_wal_size=8GB "
                   "-c track_commit_timestamp=on -c shared_buffers=512MB -c maintenance_work_mem=512MB")
        subprocess.run(as_postgres([str(self.bin / "pg_ctl"), "-D", self.root + "/data", "-l", self.root + "/log",
                                    "-w", "-o", options, "start"]), check=True, stdout=subprocess.DEVNULL)

    def conninfo(self, database):
        return f"host={self.root} dbname={database} user=postgres"

    def psql(self, sql, database="postgres"):
        out = subprocess.run([str(self.bin / "psql"), "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", self.root,
                              "-U", "postgres", "-d", database, "-c", sql], check=True, capture_output=True, text=True)
        return out.stdout.strip()

    def psql_argv(self, database, command):
        return [str(self.bin / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", self.root, "-U", "postgres",
                "-d", database, "-c", command]

    def stop(self):
        subprocess.run(as_postgres([str(self.bin / "pg_ctl"), "-D", self.root + "/data", "-m", "fast", "-w", "stop"]),
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        shutil.rmtree(self.root, ignore_errors=True)


def percentile(values, p):
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, int(round(p / 100.0 * len(ordered) + 0.5)) - 1))
    return ordered[index]


def median_case(argv, repeats, stdin_path=None):
    """Runs argv `repeats` times: (median seconds, the last run)."""
    runs = [check(measure(argv, stdin_path), " ".join(argv[:6])) for _ in range(repeats)]
    return statistics.median(r.seconds for r in runs), runs[-1]


def read_copy(archivist, server, repeats, checks):
    """Issue 28: bench/scale.py's one-shot questions against the copy, next to psql with hand-written SQL."""
    uri = f"postgresql:///copy?host={server.root}&user=postgres"
    arch = [str(archivist), "--data", uri, "--format", "jsonl"]
    middle = server.psql("SELECT id FROM articles ORDER BY id COLLATE \"C\" OFFSET (SELECT count(*) / 2 FROM articles) LIMIT 1",
                         "copy")
    quoted = "'" + middle.replace("'", "''") + "'"
    weight = ("(SELECT sum(CASE w WHEN 'A' THEN 3 WHEN 'B' THEN 2 WHEN 'C' THEN 1 ELSE 0 END) FROM unnest(terms) u, "
              "unnest(u.weights) w WHERE u.lexeme = 'election')")
    series = ", ".join(f"count(*) FILTER (WHERE terms @@ '{word}')" for word in TREND_WORDS)

    def ids(out):
        return [json.loads(line)["_id"] for line in out.splitlines() if line.strip()]

    def pairs(out):
        return [(row["value"], row["count"]) for row in map(json.loads, filter(str.strip, out.splitlines()))]

    def sql_pairs(out):
        return [(line.split("|")[0], int(line.split("|")[1])) for line in out.splitlines() if line.strip()]

    def trend(out):
        table = {}
        for row in map(json.loads, filter(str.strip, out.splitlines())):
            table.setdefault(row["bucket"], {})[row["series"]] = row["count"]
            table[row["bucket"]]["total"] = row["total"]
        return table

    def sql_trend(out):
        table = {}
        for line in out.splitlines():
            if line.strip():
                fields = line.split("|")
                table[fields[0]] = dict(zip(["total"] + TREND_WORDS, map(int, fields[1:])))
        return table

    questions = [
        ("count", "`count section_name = Sports`", ["count", "section_name = Sports"], int,
         "SELECT count(*) FROM articles WHERE section_name = 'Sports'", int),
        ("three", "`count section_name = Sports and pub_date >= 2010-01-01 and word_count > 500`",
         ["count", "section_name = Sports and pub_date >= 2010-01-01 and word_count > 500"], int,
         "SELECT count(*) FROM articles WHERE section_name = 'Sports' AND pub_date >= '2010-01-01' AND word_count > 500 "
         "AND jsonb_typeof(doc->'word_count') = 'number'", int),  # a whole number written as a string is not > 500
        ("text_count", "`count '\"election\"'`", ["count", '"election"'], int,
         "SELECT count(*) FROM articles WHERE terms @@ 'election'", int),
        ("text_find", "`find '\"election\"' --limit 10` (ranked)", ["find", '"election"', "--limit", "10"], ids,
         f"SELECT doc FROM articles WHERE terms @@ 'election' ORDER BY {weight} DESC, id COLLATE \"C\" LIMIT 10", ids),
        ("facet", "`facet section_name --limit 3`", ["facet", "section_name", "--limit", "3"], pairs,
         "SELECT section_name, count(*) FROM articles GROUP BY 1 ORDER BY 2 DESC, section_name COLLATE \"C\" LIMIT 3", sql_pairs),
        ("top10", "`find 'pub_date >= 2000-01-01' --sort pub_date:desc --limit 10`",
         ["find", "pub_date >= 2000-01-01", "--sort", "pub_date:desc", "--limit", "10"], ids,
         "SELECT doc FROM articles WHERE pub_date >= '2000-01-01' ORDER BY pub_date DESC, id COLLATE \"C\" LIMIT 10", ids),
        ("get", "`get ID` (the middle document)", ["get", middle], ids, f"SELECT doc FROM articles WHERE id = {quoted}", ids),
        ("trend", f"`trend {' '.join(TREND_WORDS)}` (yearly)", ["trend"] + TREND_WORDS + ["--by", "year"], trend,
         f"SELECT to_char(date_trunc('year', pub_date AT TIME ZONE 'UTC'), 'YYYY'), count(*), {series} FROM articles "
         "WHERE pub_date IS NOT NULL GROUP BY 1 ORDER BY 1", sql_trend),
    ]
    lines = [f"Reading the copy (issue 28): whole processes, median of {repeats}", "",
             "| question | `archivist --data postgresql://...` | `psql -c` (hand-written SQL) | ratio | answers |",
             "|---|---:|---:|---:|---|"]
    for key, label, words, parse, sql, sql_parse in questions:
        ours, our_run = median_case(arch + words, repeats)
        theirs, their_run = median_case(["psql", "-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-h", server.root, "-U",
                                         "postgres", "-d", "copy", "-c", sql], repeats)
        same = parse(our_run.stdout) == sql_parse(their_run.stdout)
        ratio = ours / theirs if theirs > 0 else float("inf")
        lines.append(f"| {label} | {ours * 1e3:.1f} ms | {theirs * 1e3:.1f} ms | {ratio:.2f}x | {'same' if same else 'DIFFER'} |")
        checks.append((f"copy {key} within {COPY_RATIO}x of psql", f"{ratio:.2f}x", ratio <= COPY_RATIO))
        checks.append((f"copy {key} answers as psql", "same" if same else "differ", same))
    # The shell's first answer: its start, its connection and one question the server answers at
    # once (the middle document by its ID), so that the figure is the shell's and not the query's.
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as question:
        question.write(f"count _id = {json.dumps(middle)}\n")
    first, first_run = median_case([str(archivist), "--data", uri, "--interactive"], repeats, question.name)
    os.unlink(question.name)
    lines.append(f"| the shell's first answer (`--interactive`, `count _id = ID` piped, start to exit) | {first * 1e3:.1f} ms | | | "
                 f"{first_run.stdout.strip().splitlines()[-2] if first_run.stdout.strip() else ''} |")
    checks.append((f"shell's first answer over the copy < {FIRST_ANSWER_MS:.0f} ms", f"{first * 1e3:.1f} ms",
                   first * 1e3 < FIRST_ANSWER_MS))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--folder", help="an existing data folder")
    parser.add_argument("--jsonl", help="the same documents as JSON Lines (for psql \\copy)")
    parser.add_argument("--count", type=int, default=100_000, help="documents to generate when --folder is not given")
    parser.add_argument("--workdir", default=None)
    parser.add_argument("--binary", help="archivist binary (else the release build)")
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--scratch-path", default=None)
    parser.add_argument("--rate", type=int, default=500, help="changes a second during the follow test")
    parser.add_argument("--seconds", type=float, default=20.0, help="how long the writer writes")
    parser.add_argument("--idle", type=float, default=10.0, help="seconds the idle follower is watched")
    parser.add_argument("--repeats", type=int, default=5, help="runs of each question against the copy (median)")
    parser.add_argument("--skip-follow", action="store_true", help="leave out the follow and idle phases (3 and 4)")
    args = parser.parse_args()

    if args.binary:
        archivist = Path(args.binary)
        bench = archivist.parent / "archivist-bench"
    else:
        archivist, bench = binaries(args.scratch_path, args.skip_build, ["archivist", "archivist-bench"])
    workdir = Path(args.workdir or tempfile.mkdtemp(prefix="archivist-replicate-"))
    workdir.mkdir(parents=True, exist_ok=True)
    phases = {}
    if args.folder:
        folder = Path(args.folder)
        jsonl = Path(args.jsonl) if args.jsonl else None
        if jsonl is None:
            log("--folder needs --jsonl (the same documents, for psql \\copy)")
            sys.exit(1)
    else:
        jsonl = workdir / "docs.jsonl"
        folder = workdir / "data"
        started = time.perf_counter()
        generate(bench, args.count, 3, jsonl)
        check(measure([str(archivist), "--data", str(folder), "import", str(jsonl)]), "import")
        phases["generate and import"] = time.perf_counter() - started
    documents = int(json.loads(check(measure([str(archivist), "--data", str(folder), "--format", "json", "stats"]),
                                     "stats").stdout)["documents"])
    os.chmod(jsonl, 0o644)

    server = Server(workdir)
    rows = []
    checks = []
    try:
        # 1. The peer: \copy into one jsonb column, then its GIN index.
        server.psql("CREATE DATABASE peer")
        server.psql("CREATE TABLE raw (doc jsonb)", "peer")
        copy = check(measure(server.psql_argv(
            "peer", f"\\copy raw FROM '{jsonl}' WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')")), "psql \\copy")
        index = check(measure(server.psql_argv("peer", "CREATE INDEX ON raw USING gin (doc jsonb_path_ops)")), "peer index")
        peer_rows = int(server.psql("SELECT count(*) FROM raw", "peer"))
        # 2. archivist replicate into an empty database.
        server.psql("CREATE DATABASE copy")
        load = check(measure([str(archivist), "--data", str(folder), "--format", "json", "replicate",
                              server.conninfo("copy")]), "replicate")
        report = json.loads(load.stdout)
        peer_rate = peer_rows / (copy.seconds + index.seconds)
        ours_rate = documents / load.seconds
        rows.append(f"| `psql \\copy` into one jsonb column | {copy.seconds:.1f} s | {copy.rss_mb:.0f} MB | "
                    f"{peer_rows / copy.seconds:,.0f} |")
        rows.append(f"| ... + `CREATE INDEX ... gin (doc jsonb_path_ops)` | {copy.seconds + index.seconds:.1f} s | "
                    f"{index.rss_mb:.0f} MB | {peer_rate:,.0f} |")
        rows.append(f"| `archivist replicate` (initial load, typed columns, terms, {report.get('rows')} rows, "
                    f"all indexes) | {load.seconds:.1f} s | {load.rss_mb:.0f} MB | {ours_rate:,.0f} |")
        checks.append((f"initial load >= {LOAD_RATIO:.0%} of the peer's rate (copy + index)",
                       f"{ours_rate / peer_rate:.0%}", ours_rate >= LOAD_RATIO * peer_rate))
        checks.append((f"initial load peak RSS < {LOAD_RSS_MB:.0f} MB", f"{load.rss_mb:.0f} MB", load.rss_mb < LOAD_RSS_MB))

        if not args.skip_follow:
            # 3. --follow under a writer.
            batch = max(1, args.rate // 10)
            writer_file = workdir / "writer.jsonl"
            follower = subprocess.Popen([str(archivist), "--data", str(folder), "replicate", server.conninfo("copy"), "--follow"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(1.0)
            before = int(server.psql("SELECT coalesce(max(seq), 0) FROM articles", "copy"))
            run_token = f"{time.time():.0f}"
            started = time.perf_counter()
            written = 0
            tick = 0
            while time.perf_counter() - started < args.seconds:
                with open(writer_file, "w") as out:
                    for k in range(batch):
                        out.write(json.dumps({"_id": f"bench-follow-{run_token}-{tick}-{k}", "headline": {"main": f"tick {tick}"},
                                              "pub_date": "2026-12-03T00:00:00Z", "section_name": "Bench"}) + "\n")
                check(measure([str(archivist), "--data", str(folder), "import", str(writer_file)]), "writer import")
                written += batch
                tick += 1
                pause = started + tick * 0.1 - time.perf_counter()
                if pause > 0:
                    time.sleep(pause)
            elapsed = time.perf_counter() - started
            deadline = time.time() + 60
            expected = int(json.loads(check(measure([str(archivist), "--data", str(folder), "--format", "json", "stats"]),
                                            "stats").stdout)["documents"])
            while time.time() < deadline and int(server.psql("SELECT count(*) FROM articles", "copy")) < expected:
                time.sleep(0.1)
            lags = [float(v) for v in server.psql(
                "SELECT extract(epoch FROM pg_xact_commit_timestamp(xmin) - updated_at) * 1000 FROM articles "
                f"WHERE seq > {before}", "copy").split()]
            # 4. Idle.
            time.sleep(1.0)
            cpu_before = cpu_seconds(follower.pid)
            time.sleep(args.idle)
            idle_cpu = cpu_seconds(follower.pid) - cpu_before
            follower.send_signal(2)
            follower.wait(timeout=30)
            median = statistics.median(lags) if lags else float("nan")
            p99 = percentile(lags, 99)
            rows.append(f"| `replicate --follow`, writer at {written / elapsed:,.0f} changes/s for {elapsed:.0f} s "
                        f"({len(lags)} changes) | lag median {median:.0f} ms, p99 {p99:.0f} ms | | |")
            rows.append(f"| idle follower, {args.idle:.0f} s | {idle_cpu * 1000:.0f} ms CPU | | |")
            checks.append((f"follow lag median < {LAG_MEDIAN_MS:.0f} ms", f"{median:.0f} ms", median < LAG_MEDIAN_MS))
            checks.append((f"follow lag p99 < {LAG_P99_MS:.0f} ms", f"{p99:.0f} ms", p99 < LAG_P99_MS))
            checks.append(("idle follower uses no CPU (< 1% of a core)", f"{idle_cpu / args.idle:.2%}", idle_cpu / args.idle < 0.01))
            checks.append(("every change reached the copy", f"{len(lags)} of {written}", len(lags) >= written))

        # 5. The shell over the copy, next to psql running hand-written SQL.
        rows.append("")
        rows += read_copy(archivist, server, args.repeats, checks)

    finally:
        server.stop()

    version = server.bin.parent.name
    lines = [f"Replication of {documents:,} documents into PostgreSQL {version} ({source_state()}); "
             "one run, whole processes, peak RSS from wait4", "",
             "| what | wall | peak RSS | docs/s |", "|---|---:|---:|---:|"] + rows
    for phase, seconds in phases.items():
        lines.append(f"\n{phase}: {seconds:.1f} s")
    return publish(lines, checks, "replicate.md")


if __name__ == "__main__":
    sys.exit(main())
