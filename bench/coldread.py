#!/usr/bin/env python3
"""Reading every document from a cold disk: `check`, `export` and `repair` next to `tar cf - docs | cat`.

Every document of a data folder is read by `archivist check` (and compared with the index), by
`archivist export` (written as JSON Lines) and by `archivist repair` when it rebuilds the index
from the documents (derived files deleted). Their floor is the rate the disk gives for reading
those files: `tar cf - docs | cat > /dev/null` in the data folder, which reads each file once in
the order the folders list them (tar skips reading when it writes to /dev/null itself, hence the
cat).

Each command runs once per repetition with the page cache cold: `sync` and
`echo 3 > /proc/sys/vm/drop_caches` when this process may write it (root on the machine), else
every file of the folder is evicted with posix_fadvise(POSIX_FADV_DONTNEED) after a sync, which
drops the clean pages of those files (said in the output: the folders' own blocks may then stay
cached). Wall time and peak RSS (wait4) of the whole process; each command's ratio to tar's time
of the same repetition.

The repair case moves `index.jsonl`, `segments/` (or a format-3 `index.snapshot`) and
`archivist.json` aside, runs `repair` (which rebuilds the index from the documents, then the
segments from it), then puts them back, so the folder ends as it started.

Usage:
  python3 bench/coldread.py --folder DIR              # an existing data folder (1M documents: ~5 GB)
  python3 bench/coldread.py --count 1000000           # generate (seed 3) and import into --workdir first
  python3 bench/coldread.py ... [--repeats 1] [--cases tar,export,check,repair] [--binary PATH] [--skip-build]

Standard library only; bench/RESULTS-style table on stdout and in bench/out/coldread.md.
"""

import os
import shutil
import statistics
import sys
import time
from pathlib import Path

from benchkit import binaries, check, generate, log, measure, parse_arguments, publish, source_state, work_folder

RATIO_TARGET = 1.3  # check, export and repair within 1.3x of tar on the same folder, cold
CASES = ["tar", "export", "check", "repair"]


def drop_caches(folder):
    """Makes the page cache cold for `folder`; returns how it was done."""
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as control:
            control.write("3\n")
        return "drop_caches"
    except OSError:
        pass
    for root, _, files in os.walk(folder):
        for name in files:
            try:
                fd = os.open(os.path.join(root, name), os.O_RDONLY | os.O_NONBLOCK)
            except OSError:
                continue
            try:
                os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            finally:
                os.close(fd)
    return "fadvise"


def run_case(case, archivist, folder):
    if case == "tar":
        return measure(["sh", "-c", "tar cf - docs | cat > /dev/null"], cwd=folder)
    if case == "export":
        return measure([str(archivist), "--data", str(folder), "export"])
    if case == "check":
        return measure([str(archivist), "--data", str(folder), "check", "--format", "jsonl"])
    if case == "repair":
        aside = folder / "bench-aside"
        aside.mkdir(exist_ok=True)
        names = ["index.jsonl", "index.snapshot", "archivist.json", "segments"]
        for name in names:
            if (folder / name).is_dir():
                shutil.move(str(folder / name), str(aside / name))
            elif (folder / name).exists():
                shutil.copy2(folder / name, aside / name)
        for name in ["index.jsonl", "index.snapshot"]:
            (folder / name).unlink(missing_ok=True)
        drop_caches(folder)
        try:
            return measure([str(archivist), "--data", str(folder), "repair", "--format", "jsonl"])
        finally:
            if (folder / "segments").exists():
                shutil.rmtree(folder / "segments")
            for name in names:
                if (aside / name).exists():
                    os.replace(aside / name, folder / name)
            aside.rmdir()
    raise ValueError(case)


def main():
    def more(parser):
        parser.add_argument("--folder", help="an existing data folder to read (else one is generated and imported)")
        parser.add_argument("--cases", default=",".join(CASES), help="which commands, comma-separated")
        parser.add_argument("--binary", help="the archivist to measure (default: the release build)")
        parser.add_argument("--keep", action="store_true", help="keep a generated work folder")

    _, args, count = parse_arguments(__doc__.splitlines()[0], 1_000_000, 20_000, "documents to generate when no --folder",
                                     1, "cold runs of each command", seed=3, more=more)
    cases = [case for case in args.cases.split(",") if case]
    unknown = [case for case in cases if case not in CASES]
    if unknown:
        log(f"unknown case {unknown[0]} (cases: {', '.join(CASES)})")
        return 2
    archivist, bench = binaries(args.scratch_path, args.skip_build, ("archivist", "archivist-bench"))
    if args.binary:
        archivist = Path(args.binary).resolve()
    work = None
    if args.folder:
        folder = Path(args.folder).resolve()
    else:
        work = work_folder("archivist-coldread-", args.workdir, count * 6000)
        source = work / "docs.jsonl"
        generate(bench, count, args.seed, source)
        folder = work / "data"
        check(measure([str(archivist), "--data", str(folder), "import", str(source)]), "import")
        source.unlink()
    documents = int(check(measure([str(archivist), "--data", str(folder), "count"]), "count").stdout.strip() or "0")
    results = {case: [] for case in cases}
    tar_seconds = []
    how = None
    for repeat in range(args.repeats):
        for case in cases:
            how = drop_caches(folder)
            log(f"run {repeat + 1}/{args.repeats}: {case} (cold, {how})...")
            run = run_case(case, archivist, folder)
            if run.code not in (0,):
                log(f"{case} exited {run.code}: {run.stderr[-2000:]}")
                return 1
            results[case].append(run)
            if case == "tar":
                tar_seconds.append(run.seconds)
            log(f"  {run.seconds:.1f} s, {run.rss_mb:.0f} MB")

    def cell(runs):
        values = [run.seconds for run in runs]
        median = statistics.median(values)
        spread = f" ({min(values):.1f} – {max(values):.1f})" if len(values) > 1 else ""
        return median, f"{median:.1f} s{spread}"

    lines = [
        f"Cold reads of {documents:,} documents in {folder} ({source_state()}, {time.strftime('%Y-%m-%d')}); "
        f"page cache dropped before each run by {how}; medians of {args.repeats} run(s)",
        "",
        "| command | wall | peak RSS | vs tar | docs/s |",
        "|---|---:|---:|---:|---:|",
    ]
    checks = []
    tar_median = statistics.median(tar_seconds) if tar_seconds else None
    for case in cases:
        median, text = cell(results[case])
        rss = max(run.rss_mb for run in results[case])
        ratio = f"{median / tar_median:.2f}x" if tar_median else "–"
        label = {"tar": "`tar cf - docs | cat`", "export": "`archivist export`", "check": "`archivist check`",
                 "repair": "`archivist repair` (index rebuilt from the documents)"}[case]
        lines.append(f"| {label} | {text} | {rss:.0f} MB | {ratio} | {documents / median:,.0f} |")
        if case != "tar" and tar_median:
            checks.append((f"{case} within {RATIO_TARGET}x of tar, cold", f"{median / tar_median:.2f}x",
                           median <= RATIO_TARGET * tar_median))
    lines.append("")
    status = publish(lines, checks, "coldread.md")
    if work and not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    elif work:
        log(f"kept {work}")
    return status


if __name__ == "__main__":
    sys.exit(main())
