#!/usr/bin/env python3
"""Archivist query benchmark: warm query latency against SQLite and jq, and one-shot counts.

Builds `archivist` and `archivist-bench` in release mode, generates N NYT-shaped documents
(seeded), imports them with `archivist import`, exports them again with `archivist export` (the
JSON Lines every peer reads, so all contestants hold the same documents), then measures on that data:

  (a) archivist, warm    `archivist-bench query --data DIR`: one process opens the store, builds the
                         query index once (timed apart), runs each query once (timed apart: that run
                         builds the hash, sorted or text index the query needs), then --repeats warm
                         runs (default 50) through the library (`store.find`, `store.facet`)
  (b) sqlite3, warm      Python's sqlite3 module in one child process, the documents as JSON text in
                         docs(id TEXT PRIMARY KEY, body TEXT) queried with json_extract: once with no
                         other index, once with expression indexes on $.section_name and $.pub_date
                         (then ANALYZE); a 1 GiB page cache so warm runs read no file; the same
                         first-run / warm-run split, warm runs capped at a few seconds per query
  (c) jq 1.6             `jq -n` over the exported JSON Lines, whole process per run (start-up and
                         parsing every document included: jq has no index to keep warm)
  (d) one-shot count     `archivist --data DIR count FILTER` as a whole process (open, build the index,
                         count) next to `sqlite3 DB "SELECT count(*) ... json_extract"` on the
                         unindexed database (and, for information, the indexed one)

The queries: indexed equality (section_name = Sports), a date range (the year 2015), three clauses
(Sports since 2010 with word_count > 500), a text search for "election" (archivist: ranked full-text
search over headline, keywords, abstract, snippet and lead paragraph; the peers, as asked: a
case-insensitive match on headline.main only, unranked, so their match counts differ), a facet of
section_name over all documents, and the top 10 by pub_date descending among pub_date >= 2000-01-01.
Peers use archivist's semantics where they differ from plain comparison: `word_count > 500` holds
only for numbers (MongoDB does not compare a string with a number; 2016-shaped documents keep
word_count as a string), and the match counts of the three filters are checked to agree.

Every whole-process number is the wall time of one child process with its peak RSS from wait4(2);
a global sync(2) runs before each timed run; the order of the one-shot contestants rotates between
repetitions; the load average is printed (on a shared machine, compare only numbers of one run).

Prints a Markdown table (median and p90 or min-max), PASS/FAIL for the targets, writes it to
bench/out/query.md, and exits 1 when a target fails.

Usage:
  python3 bench/query.py                    # 100,000 documents
  python3 bench/query.py --quick            # 10,000 documents
  python3 bench/query.py --count 20000 --repeats 50 --jq-repeats 3 --oneshot-repeats 5 --seed 42
                         [--text WORD] [--scratch-path PATH] [--workdir DIR] [--skip-build]

Standard library only (plus the sqlite3 and jq programs).
"""

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

from benchkit import (J, NUMERIC_WORD_COUNT, binaries, check, expect_imported, generate, instant, json_lines, log,
                      machine_stamp, measure, ms, parse_arguments, publish, require_programs, rotated, settle,
                      source_state, sqlite_version, work_folder)


FAST_MS = 1.0  # warm indexed equality and top-10
TEXT_FACET_MS = 20.0  # warm text search and facet
TIMELINE_MS = 30.0  # warm timeline (the shell-language issue: under 30 ms at 100k)
FILTER_MS = 30.0  # every warm query over the projection
SQLITE_CACHE_KIB = 1 << 20  # PRAGMA cache_size for the warm SQLite runs: 1 GiB
SQLITE_BUDGET_S = 3.0  # warm SQLite runs of one query stop after this long (at least 3 runs)


def queries(word):
    """(name, label, archivist filter for one-shot count, SQL WHERE, jq select condition, kind)."""
    like = word.replace("'", "''")
    jq_word = json.dumps(word)
    return [
        ("equality", "`section_name = Sports`", "section_name = Sports",
         f"{J('section_name')} = 'Sports'", '.section_name == "Sports"', "rows"),
        ("date_range", "`pub_date >= 2015-01-01 and pub_date < 2016-01-01`", None,
         f"{J('pub_date')} >= '2015-01-01' AND {J('pub_date')} < '2016-01-01'",
         '.pub_date >= "2015-01-01" and .pub_date < "2016-01-01"', "rows"),
        ("three_clauses", "`section_name = Sports and pub_date >= 2010-01-01 and word_count > 500`",
         "section_name = Sports and pub_date >= 2010-01-01 and word_count > 500",
         f"{J('section_name')} = 'Sports' AND {J('pub_date')} >= '2010-01-01' AND {NUMERIC_WORD_COUNT}",
         '.section_name == "Sports" and .pub_date >= "2010-01-01" and (.word_count|type) == "number" and .word_count > 500',
         "rows"),
        ("text", f'`"{word}"` (ranked)', None,
         f"{J('headline.main')} LIKE '%{like}%'", f'(.headline.main // "") | test({jq_word}; "i")', "rows"),
        ("facet", "`facet section_name` (all documents)", None, None, None, "facet"),
        ("timeline", "`facet pub_date:year` (all documents, a timeline)", None, None, None, "timeline"),
        ("top10", "`pub_date >= 2000-01-01`, sort pub_date:desc, limit 10", None,
         f"{J('pub_date')} >= '2000-01-01'", '.pub_date >= "2000-01-01"', "top10"),
    ]


def sql_of(name, where, kind):
    if kind == "facet":
        return f"SELECT {J('section_name')} AS s, count(*) FROM docs GROUP BY s ORDER BY 2 DESC"
    if kind == "timeline":
        return f"SELECT substr({J('pub_date')}, 1, 4) AS y, count(*) FROM docs GROUP BY y ORDER BY y"
    if kind == "top10":
        return f"SELECT id FROM docs WHERE {where} ORDER BY {J('pub_date')} DESC LIMIT 10"
    return f"SELECT id FROM docs WHERE {where}"


def jq_program(select, kind):
    if kind == "facet":
        return 'reduce (inputs | .section_name | tostring) as $s ({}; .[$s] += 1) | length'
    if kind == "timeline":
        return 'reduce (inputs | (.pub_date // "")[0:4]) as $y ({}; .[$y] += 1) | length'
    if kind == "top10":
        return f'[inputs | select({select}) | {{_id, pub_date}}] | sort_by(.pub_date) | reverse | .[:10] | map(._id)'
    return f"reduce (inputs | select({select})) as $d (0; . + 1)"


# One child process: opens the database, runs each query once (first), then warm repeats.
PY_SQLITE_WARM = r"""
import json, sqlite3, statistics, sys, time
db, repeats, budget, cache_kib = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
plan = json.loads(sys.stdin.read())
connection = sqlite3.connect(db)
connection.execute(f"PRAGMA cache_size=-{cache_kib}")
for name, sql in plan:
    start = time.perf_counter()
    rows = connection.execute(sql).fetchall()
    first = time.perf_counter() - start
    times = []
    spent = 0.0
    while len(times) < repeats and (len(times) < 3 or spent < budget):
        start = time.perf_counter()
        again = connection.execute(sql).fetchall()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        spent += elapsed
        if len(again) != len(rows):
            sys.exit(f"{name}: {len(again)} rows, then {len(rows)}")
    times.sort()
    p90 = times[min(len(times) - 1, max(0, -(-9 * len(times) // 10) - 1))]
    print(json.dumps({"query": name, "first_ms": first * 1e3, "median_ms": statistics.median(times) * 1e3,
                      "p90_ms": p90 * 1e3, "repeats": len(times), "matches": len(rows),
                      "ids": [r[0] for r in rows] if len(rows) <= 10 else []}), flush=True)
"""


def load_sqlite(jsonl, plain_db, indexed_db):
    """docs(id, body) from the exported lines (one transaction), then a copy with expression indexes.

    Returns {id: pub_date instant} and the seconds the indexes took to build."""
    dates = {}

    def rows():
        for body, document in json_lines(jsonl):
            dates[document["_id"]] = instant(document.get("pub_date"))
            yield document["_id"], body

    connection = sqlite3.connect(plain_db)
    connection.execute("CREATE TABLE docs(id TEXT PRIMARY KEY, body TEXT)")
    with connection:
        connection.executemany("INSERT INTO docs VALUES(?, ?)", rows())
    connection.close()
    shutil.copyfile(plain_db, indexed_db)
    connection = sqlite3.connect(indexed_db)
    start = time.perf_counter()
    with connection:
        connection.execute(f"CREATE INDEX docs_section ON docs({J('section_name')})")
        connection.execute(f"CREATE INDEX docs_pub_date ON docs({J('pub_date')})")
    connection.execute("ANALYZE")
    seconds = time.perf_counter() - start
    connection.close()
    return dates, seconds


def plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def warm_cell(result):
    if result is None:
        return "–"
    return f"{ms(result['median_ms'])} (p90 {ms(result['p90_ms'])})"


def spread_cell(seconds):
    median = statistics.median(seconds) * 1e3
    return f"{ms(median)} ({ms(min(seconds) * 1e3)} – {ms(max(seconds) * 1e3)})"


def main():
    def more(parser):
        parser.add_argument("--jq-repeats", type=int, default=3, help="jq runs of each query (default 3)")
        parser.add_argument("--oneshot-repeats", type=int, default=5, help="runs of each one-shot count (default 5)")
        parser.add_argument("--text", default="election", help="the word of the text search (default election)")

    parser, args, count = parse_arguments("Archivist query benchmark (prints a Markdown table).", 100_000, 10_000,
                                          "documents to generate and import", 50, "warm runs of each query", more=more)
    if count <= 0 or args.repeats <= 0 or args.jq_repeats <= 0 or args.oneshot_repeats <= 0:
        parser.error("--count and the repeats must be positive")
    if not args.text.isalnum():
        parser.error("--text takes one word")
    require_programs("sqlite3", "jq")
    jq_version = subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip()

    archivist, bench = binaries(args.scratch_path, args.skip_build, ("archivist", "archivist-bench"))
    # Generated and exported JSON Lines, the store (a 4 KiB block or two per document), two databases.
    work = work_folder("archivist-qbench-", args.workdir, count * (2 * 2_100 + 9_000 + 2 * 2_500))
    plan = queries(args.text)
    try:
        jsonl = work / "generated.jsonl"
        _, generated = generate(bench, count, args.seed, jsonl)
        store = work / "store"
        log("importing...")
        expect_imported(measure([str(archivist), "--data", str(store), "import", str(jsonl)]), count)
        exported = work / "export.jsonl"
        log("exporting (the JSON Lines every peer reads)...")
        check(measure([str(archivist), "--data", str(store), "export", "--to", str(exported)]), "archivist export")
        log("loading SQLite...")
        plain_db, indexed_db = work / "plain.db", work / "indexed.db"
        dates, index_seconds = load_sqlite(exported, plain_db, indexed_db)
        if len(dates) != count:
            log(f"expected {count} documents in the export, found {len(dates)}")
            sys.exit(1)

        load_before = os.getloadavg()

        # (a) archivist, warm.
        settle()
        log(f"archivist-bench query ({args.repeats} warm runs)...")
        run = check(measure([str(bench), "query", "--data", str(store), "--repeats", str(args.repeats),
                             "--text", args.text]), "archivist-bench query")
        lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        opened = next(line for line in lines if line.get("phase") == "open")
        ours = {line["query"]: line for line in lines if "query" in line}
        ours_rss, ours_seconds = run.rss_mb, run.seconds
        if opened["documents"] != count:
            log(f"archivist-bench query: expected {count} documents, found {opened['documents']}")
            sys.exit(1)

        # (b) sqlite3, warm, without and with expression indexes.
        sqlite_warm, sqlite_rss = {}, {}
        sql_plan = [(name, sql_of(name, where, kind)) for name, _, _, where, _, kind in plan]
        for label, db in (("plain", plain_db), ("indexed", indexed_db)):
            settle()
            log(f"sqlite3 warm ({label})...")
            with tempfile.NamedTemporaryFile("w", suffix=".json", dir=work, delete=False) as handle:
                json.dump(sql_plan, handle)
            run = check(measure([sys.executable, "-c", PY_SQLITE_WARM, str(db), str(args.repeats), str(SQLITE_BUDGET_S),
                                 str(SQLITE_CACHE_KIB)], stdin_path=handle.name), f"sqlite3 warm ({label})")
            sqlite_warm[label] = {line["query"]: line for line in map(json.loads, run.stdout.splitlines())}
            sqlite_rss[label] = run.rss_mb

        # (c) jq, whole process per run.
        jq_runs = {}
        for name, _, _, _, select, kind in plan:
            program = jq_program(select, kind)
            for _, _, _ in rotated([(f"jq {name}", None)], args.jq_repeats):
                run = check(measure(["jq", "-c", "-n", program, str(exported)]), f"jq {name}")
                output = json.loads(run.stdout)
                jq_runs.setdefault(name, []).append((run.seconds, run.rss_mb, output))

        # (d) one-shot counts, whole process, the order rotating between repetitions.
        oneshot = {}
        contestants = []
        for name, _, filter_text, where, _, _ in plan:
            if filter_text is None:
                continue
            sql = f"SELECT count(*) FROM docs WHERE {where};"
            for label, argv in (("archivist", [str(archivist), "--data", str(store), "count", filter_text]),
                                ("sqlite plain", ["sqlite3", str(plain_db), sql]),
                                ("sqlite indexed", ["sqlite3", str(indexed_db), sql])):
                contestants.append((f"one-shot count: {name}, {label}", ((name, label), argv)))
        for _, _, (key, argv) in rotated(contestants, args.oneshot_repeats):
            run = check(measure(argv), " ".join(key))
            oneshot.setdefault(key, []).append((run.seconds, run.rss_mb, int(run.stdout.strip())))
        load_after = os.getloadavg()
        sizes = {"store index.jsonl": (store / "index.jsonl").stat().st_size, "export": exported.stat().st_size,
                 "sqlite plain": plain_db.stat().st_size, "sqlite indexed": indexed_db.stat().st_size}
    finally:
        shutil.rmtree(work, ignore_errors=True)

    # Consistency: the three filters must agree everywhere; the top 10 must hold the same instants.
    warnings = []

    def jq_matches(name):
        output = jq_runs[name][0][2]
        return len(output) if isinstance(output, list) else output

    for name in ("equality", "date_range", "three_clauses"):
        counts = {"archivist": ours[name]["matches"], "sqlite": sqlite_warm["plain"][name]["matches"],
                  "sqlite indexed": sqlite_warm["indexed"][name]["matches"], "jq": jq_matches(name)}
        counts.update({f"count {label}": runs[0][2] for (query, label), runs in oneshot.items() if query == name})
        if len(set(counts.values())) != 1:
            warnings.append(f"{name}: the match counts differ: {counts}")
    facet_values = {ours["facet"]["matches"], sqlite_warm["plain"]["facet"]["matches"],
                    sqlite_warm["indexed"]["facet"]["matches"], jq_matches("facet")}
    if len(facet_values) != 1:
        warnings.append(f"facet: the number of values differs: {sorted(facet_values)}")
    year_counts = {ours["timeline"]["matches"], sqlite_warm["plain"]["timeline"]["matches"],
                   sqlite_warm["indexed"]["timeline"]["matches"], jq_matches("timeline")}
    if len(year_counts) != 1:
        warnings.append(f"timeline: the number of years differs: {sorted(year_counts)}")
    top = [sorted((dates.get(i) for i in ids), reverse=True) for ids in
           (ours["top10"].get("ids", []), sqlite_warm["plain"]["top10"]["ids"], sqlite_warm["indexed"]["top10"]["ids"],
            jq_runs["top10"][0][2])]
    if any(t != top[0] for t in top[1:]) or len(top[0]) != 10:
        warnings.append("top10: the ten pub_dates differ between contestants")
    for warning in warnings:
        log("warning: " + warning)

    # Report.
    def median_of(name):
        return ours[name]["median_ms"]

    def oneshot_median(name, label):
        return statistics.median(run[0] for run in oneshot[(name, label)])

    filter_worst = max(plan, key=lambda q: median_of(q[0]))[0]
    checks = [
        (f"warm indexed equality < {FAST_MS:g} ms (median)", ms(median_of("equality")), median_of("equality") < FAST_MS),
        (f"warm sorted top-10 < {FAST_MS:g} ms (median)", ms(median_of("top10")), median_of("top10") < FAST_MS),
        (f"warm text search < {TEXT_FACET_MS:g} ms (median)", ms(median_of("text")), median_of("text") < TEXT_FACET_MS),
        (f"warm facet < {TEXT_FACET_MS:g} ms (median)", ms(median_of("facet")), median_of("facet") < TEXT_FACET_MS),
        (f"warm timeline (facet pub_date:year) < {TIMELINE_MS:g} ms (median)", ms(median_of("timeline")),
         median_of("timeline") < TIMELINE_MS),
        (f"every warm query over the projection < {FILTER_MS:g} ms (slowest median: {filter_worst})",
         ms(median_of(filter_worst)), median_of(filter_worst) < FILTER_MS),
    ]
    for name in ("equality", "three_clauses"):
        ours_s, theirs_s = oneshot_median(name, "archivist"), oneshot_median(name, "sqlite plain")
        checks.append((f"one-shot `archivist count` ≤ sqlite3 CLI unindexed json_extract count ({name}, median)",
                       f"{ms(ours_s * 1e3)} vs {ms(theirs_s * 1e3)}", ours_s <= theirs_s))

    def matches_cell(name, kind):
        if kind == "facet":
            return f"{ours[name]['matches']} values"
        if kind == "timeline":
            return f"{ours[name]['matches']} years"
        if kind == "top10":
            return f"10 of {ours[name]['matches']:,}"
        values = [ours[name]["matches"], sqlite_warm["plain"][name]["matches"], jq_matches(name)]
        if len(set(values)) == 1:
            return f"{values[0]:,}"
        return f"{values[0]:,} / {values[1]:,} / {values[2]:,}"

    lines = [
        f"# Archivist query benchmark: {count:,} documents",
        "",
        f"{machine_stamp()} · source {source_state()} · seed {args.seed} · {generated.get('bytes', 0) / count:,.0f} bytes/doc as JSON Lines · "
        f"{jq_version}, SQLite {sqlite_version()} (CLI), {sqlite3.sqlite_version} (Python module) · "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after",
        "",
        f"Warm: archivist {args.repeats} runs per query in one process through the library (median, p90); "
        f"sqlite3 in one Python process with a 1 GiB page cache, up to {args.repeats} runs or {SQLITE_BUDGET_S:g} s per "
        f"query (at least 3); jq: whole process over the exported JSON Lines, {plural(args.jq_repeats, 'run')} (median, min – max). "
        f"First run: the query's first execution after the index build (archivist builds that query's hash, sorted or "
        f"text index then; the order of the rows matters).",
        "",
        "| Query | archivist warm | archivist first run | sqlite3 json_extract, no index | sqlite3 + expression indexes "
        "| jq (whole process) | Matches |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, label, _, _, _, kind in plan:
        jq_seconds = [run[0] for run in jq_runs[name]]
        lines.append(f"| {label} | {warm_cell(ours[name])} | {ms(ours[name]['first_ms'])} | "
                     f"{warm_cell(sqlite_warm['plain'][name])} | {warm_cell(sqlite_warm['indexed'][name])} | "
                     f"{spread_cell(jq_seconds)} | {matches_cell(name, kind)} |")
    text_counts = (ours["text"]["matches"], sqlite_warm["plain"]["text"]["matches"], jq_matches("text"))
    lines += [
        "",
        "archivist warm max: " + ", ".join(f"{name} {ms(ours[name]['max_ms'])}" for name, *_ in plan) + ". "
        f"Open {ms(opened['open_ms'])}, query index build {ms(opened['index_build_ms'])} (archivist-bench query, once); "
        f"that process: {ours_seconds:.2f} s in all, peak RSS {ours_rss:.0f} MB. "
        f"sqlite3 warm processes: peak RSS {sqlite_rss['plain']:.0f} MB (no index), {sqlite_rss['indexed']:.0f} MB "
        f"(indexed); building the two expression indexes and ANALYZE took {index_seconds:.2f} s. "
        f"jq peak RSS up to {max(run[1] for runs in jq_runs.values() for run in runs):.0f} MB. "
        f"Sizes: store index.jsonl {sizes['store index.jsonl'] / 1e6:.0f} MB, export {sizes['export'] / 1e6:.0f} MB, "
        f"sqlite {sizes['sqlite plain'] / 1e6:.0f} MB without and {sizes['sqlite indexed'] / 1e6:.0f} MB with indexes.",
        "",
        f"Text search: archivist's `\"{args.text}\"` is a ranked full-text search of headline, keywords, abstract, snippet "
        f"and lead paragraph ({text_counts[0]:,} matches); the peers match `{args.text}` in headline.main only, "
        f"case-insensitively and unranked (sqlite3 LIKE {text_counts[1]:,}, jq test(\"{args.text}\"; \"i\") "
        f"{text_counts[2]:,} matches). `word_count > 500` holds only for numbers in all contestants (archivist follows "
        f"MongoDB: the 2016-shaped documents keep word_count as a string and never match). sqlite3 runs return the "
        f"matching ids (`SELECT id`), archivist's `find` returns the ids too.",
        "",
        "| One-shot count (whole process) | Median (min – max) | Peak RSS | Count |",
        "|---|---:|---:|---:|",
    ]
    for name, label, filter_text, where, _, _ in plan:
        if filter_text is None:
            continue
        for contestant, description in (("archivist", f"`archivist --data DIR count '{filter_text}'`"),
                                        ("sqlite plain", "`sqlite3 DB 'SELECT count(*) … json_extract'`, no index"),
                                        ("sqlite indexed", "the same on the indexed database (information)")):
            runs = oneshot[(name, contestant)]
            lines.append(f"| {name}: {description} | {spread_cell([r[0] for r in runs])} | "
                         f"{max(r[1] for r in runs):.0f} MB | {runs[0][2]:,} |")
    lines += ["", f"One-shot: {plural(args.oneshot_repeats, 'run')} each, the order rotating; warm page cache."]
    if warnings:
        lines += [""] + [f"**Warning:** {warning}" for warning in warnings]
    return publish(lines + [""], checks, "query.md")


if __name__ == "__main__":
    sys.exit(main())
