#!/usr/bin/env python3
"""What every benchmark of bench/ shares: its options, the binaries, running and timing commands, the report.

A script run as `python3 bench/X.py` has bench/ on its module path, so it imports this plainly
(`from benchkit import measure, publish, ...`). Standard library only.

  options and setup   parse_arguments (the options most scripts take), binaries (the release build),
                      work_folder, require_programs, source_state, machine_stamp, sqlite_version
  running a command   measure: a child process timed as a whole, start to exit, with its peak RSS
                      and CPU from wait4(2); measure_pty: the same under a pseudo-terminal, with the
                      time until the program waits for a keystroke; Spawner: both run by a lean
                      helper process (see there); check, last_json_line, settle, rotated (repeats
                      in a rotating order), cpu_seconds of a running process, generate and
                      expect_imported (the generator and `archivist import`)
  numbers             stats_of, fmt_rate, fmt_seconds, ms, table_row
  the report          publish: the Markdown table with its PASS/FAIL targets, printed and written
                      to bench/out/
  the peers' data     json_lines, sql_quote, J, NUMERIC_WORD_COUNT, instant, check_sqlite_rows

Run as a program (`python3 bench/benchkit.py spawner`), this file is the Spawner's helper process.
"""

import argparse
import datetime
import json
import os
import platform
import pty
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import termios
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"


def log(message):
    print(message, file=sys.stderr, flush=True)


# --- options and setup --------------------------------------------------------------------------------------------

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


def require_programs(*names):
    """Exits 1 unless each program is on the PATH."""
    for name in names:
        if shutil.which(name) is None:
            log(f"{name} is not installed (scripts/install-deps bench)")
            sys.exit(1)


def source_state():
    """The commit measured, with -dirty when tracked files differ from it (read-only git commands)."""
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--"], cwd=ROOT, capture_output=True).returncode != 0
        return head + ("-dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def machine_stamp():
    """`2025-01-31 14:05 UTC · Linux x86_64, 2 cores`: when and where a table was measured."""
    return (f"{datetime.datetime.now().astimezone().strftime('%Y-%m-%d %H:%M %Z')} · {platform.system()} "
            f"{platform.machine()}, {os.cpu_count()} cores")


def sqlite_version():
    """The sqlite3 program's version (`3.40.1`)."""
    return subprocess.run(["sqlite3", "--version"], capture_output=True, text=True).stdout.split()[0]


# --- running a command --------------------------------------------------------------------------------------------

class Run:
    """One finished child process: wall seconds, peak RSS (MB of 2^20 bytes), exit code, output, and
    its CPU seconds (user, system) and context switches (voluntary + involuntary)."""

    def __init__(self, seconds, rss_mb, code, stdout, stderr, user=0.0, system=0.0, switches=0):
        self.seconds = seconds
        self.rss_mb = rss_mb
        self.code = code
        self.stdout = stdout
        self.stderr = stderr
        self.user = user
        self.system = system
        self.switches = switches


def _finished(seconds, status, usage, stdout, stderr):
    """A Run from what wait4 returned. ru_maxrss is in KiB on Linux (bytes on macOS)."""
    rss_mb = usage.ru_maxrss / (1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0)
    return Run(seconds, rss_mb, os.waitstatus_to_exitcode(status), stdout, stderr, usage.ru_utime, usage.ru_stime,
               usage.ru_nvcsw + usage.ru_nivcsw)


def measure(argv, stdin_path=None, cwd=None, env=None):
    """Runs argv, returning its wall time, and its own peak RSS and CPU (wait4 on that child only,
    which counts the children it waited for too)."""
    with tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as out:
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        try:
            start = time.perf_counter()
            proc = subprocess.Popen(argv, stdin=stdin, stdout=out, stderr=err, cwd=cwd, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            seconds = time.perf_counter() - start
        finally:
            if stdin_path:
                stdin.close()
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        err.seek(0)
        return _finished(seconds, status, usage, out.read().decode("utf-8", "replace"),
                         err.read().decode("utf-8", "replace"))


def measure_pty(argv, env=None, timeout=600):
    """Runs argv (an interactive shell) under a pseudo-terminal until it exits: its Run (the
    terminal's output as stdout) and the seconds until it was ready for a keystroke (its prompt
    printed after the banner's 'Ctrl-D to leave.' line, and the terminal out of canonical mode: line
    editing is on), when Ctrl-D is typed; None when that never came."""
    start = time.perf_counter()
    pid, fd = pty.fork()
    if pid == 0:
        try:
            os.execve(argv[0], argv, os.environ if env is None else env)
        finally:
            os._exit(127)
    output, prompt_seconds, prompted = b"", None, False
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], timeout if not prompted or prompt_seconds else 0.001)
            if prompted and prompt_seconds is None and not termios.tcgetattr(fd)[3] & termios.ICANON:
                prompt_seconds = time.perf_counter() - start
                os.write(fd, b"\x04")
            if not ready and time.perf_counter() - start >= timeout:
                os.kill(pid, 9)
                break
            if not ready:
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            output += chunk
            prompted = prompted or (b"leave" in output and output.rstrip(b" ").endswith(b">"))
    finally:
        _, status, usage = os.wait4(pid, 0)
        seconds = time.perf_counter() - start
        os.close(fd)
    text = output.decode("utf-8", "replace")
    run = _finished(seconds, status, usage, text, "")
    if prompt_seconds is None and run.code == 0:
        run.code, run.stdout = 1, text + "\n(no prompt seen)"
    if run.code:
        run.stderr = run.stdout
    return run, prompt_seconds


class Spawner:
    """A lean helper process that runs `measure` and `measure_pty` for a script grown large.

    Linux's ru_maxrss of a child counts the pages of the process that spawned it (its RSS at fork, or
    the peak of its address space with vfork, which subprocess uses), so every child of a script would
    report at least that script's own peak (hundreds of MB once it has held a million IDs or built a
    database). Commands started by this helper (this file run as a program, with nothing else
    loaded) report their own peak, or the helper's when that is larger: `floor_mb()`, what
    /bin/true reports. Each command gets the script's environment as it is at the call."""

    def __init__(self):
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "spawner"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, encoding="utf-8")

    def spawn(self, argv, stdin_path=None, pty=False):
        """(Run, seconds to the shell's prompt under a pseudo-terminal, or None)."""
        self.process.stdin.write(json.dumps({"argv": [str(a) for a in argv], "pty": pty, "env": dict(os.environ),
                                             "stdin": str(stdin_path) if stdin_path else None}) + "\n")
        self.process.stdin.flush()
        reply = self.process.stdout.readline()
        if not reply:
            log("the spawner process ended")
            sys.exit(1)
        reply = json.loads(reply)
        return Run(**reply["run"]), reply["prompt"]

    def measure(self, argv, stdin_path=None):
        return self.spawn(argv, stdin_path)[0]

    def measure_pty(self, argv):
        return self.spawn(argv, pty=True)

    def floor_mb(self):
        """The peak RSS a command started this way reports at the least (/bin/true's, the largest of 3)."""
        return max(check(self.measure(["/bin/true"]), "/bin/true").rss_mb for _ in range(3))

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def serve_spawner():
    """The Spawner's side: a JSON request a line on stdin, a JSON reply a line on stdout."""
    for line in sys.stdin:
        request = json.loads(line)
        prompt = None
        if request.get("pty"):
            run, prompt = measure_pty(request["argv"], env=request["env"])
        else:
            run = measure(request["argv"], stdin_path=request.get("stdin"), env=request["env"])
        print(json.dumps({"run": vars(run), "prompt": prompt}), flush=True)


def check(run, what):
    """The run, or exit 1 with its stderr when it failed."""
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


def settle():
    """Flushes everything dirty so the next timed run does not pay for earlier writes."""
    os.sync()


def rotated(contestants, repeats, label="", skip=None):
    """Each of `contestants`, (name, value) pairs, `repeats` times, the order rotating every round so
    that drift on a shared machine favours none: yields (repeat, counted from 1, name, value), each
    after a settle() and a progress line on stderr; `skip(name, value)`, asked just before, leaves
    one out of that round."""
    for repeat in range(1, repeats + 1):
        shift = (repeat - 1) % len(contestants)
        for name, value in contestants[shift:] + contestants[:shift]:
            if skip and skip(name, value):
                continue
            settle()
            log(f"[{label}{repeat}/{repeats}] {name}...")
            yield repeat, name, value


def cpu_seconds(pid):
    """User + system CPU seconds a running process has used so far (/proc/PID/stat)."""
    with open(f"/proc/{pid}/stat", "rb") as stat:
        fields = stat.read().rsplit(b")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime (fields 14 and 15)


def generate(bench, count, seed, out, measure=measure):
    """`archivist-bench generate`: `count` documents of `seed` as JSON Lines in `out`. Returns the
    run and what the generator reported (its `bytes`, ...)."""
    log(f"generating {count:,} documents (seed {seed})...")
    run = check(measure([str(bench), "generate", "--count", str(count), "--seed", str(seed), "--out", str(out)]),
                "generate")
    return run, last_json_line(run.stdout, "generate")


def rawfs(bench, jsonl, folder, count, measure=measure):
    """`archivist-bench rawfs`, the raw file-system baseline: the documents of `jsonl` written a file
    each into `folder`. Returns the run and what it reported; exits 1 unless it wrote `count`."""
    run = check(measure([str(bench), "rawfs", "--input", str(jsonl), "--dir", str(folder)]), "rawfs")
    reported = last_json_line(run.stdout, "rawfs")
    if reported.get("docs") != count:
        log(f"rawfs: expected {count} documents, got {reported}")
        sys.exit(1)
    return run, reported


def expect_imported(run, count, what="archivist import"):
    """Exits 1 unless `archivist import`'s run succeeded and added `count` documents, none failing;
    returns its summary."""
    summary = last_json_line(check(run, what).stdout, what)
    if summary.get("added") != count or summary.get("failed", 0) != 0:
        log(f"{what}: expected {count} added and none failed, got {summary}")
        sys.exit(1)
    return summary


# --- numbers ------------------------------------------------------------------------------------------------------

def stats_of(values):
    return statistics.median(values), min(values), max(values)


def fmt_rate(values):
    median, low, high = stats_of(values)
    return f"{median:,.0f}", f"{low:,.0f} – {high:,.0f}"


def fmt_seconds(values):
    median, low, high = stats_of(values)
    return f"{median:.3f} s", f"{low:.3f} – {high:.3f} s"


def ms(value):
    """Milliseconds as the tables print them: 3 decimals under 10 ms, 1 under a second, else seconds."""
    if value is None:
        return "–"
    if value < 10:
        return f"{value:.3f} ms"
    if value < 1000:
        return f"{value:.1f} ms"
    return f"{value / 1000:.2f} s"


def table_row(name, median, spread, rss_values, note):
    """A row of the measurement tables: name, median, min – max, peak RSS (the largest), notes."""
    return f"| {name} | {median} | {spread} | {max(rss_values):.1f} MB | {note} |"


# --- the report ---------------------------------------------------------------------------------------------------

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


# --- the peers' data ----------------------------------------------------------------------------------------------

def json_lines(path):
    """Each document of a JSON Lines file: (its line without the newline, the parsed document); blank lines skipped."""
    with open(path, "r", encoding="utf-8") as source:
        for line in source:
            body = line.rstrip("\n")
            if body.strip():
                yield body, json.loads(body)


def sql_quote(text):
    return "'" + text.replace("'", "''") + "'"


def J(path):
    """SQL for a document field of a docs(id, body) table: json_extract(body,'$.PATH')."""
    return f"json_extract(body,'$.{path}')"


# `word_count > 500` as archivist (and MongoDB) read it: numbers only; the 2016-shaped documents keep it as a string.
NUMERIC_WORD_COUNT = f"json_type(body,'$.word_count') IN ('integer','real') AND {J('word_count')} > 500"


def instant(text):
    """Seconds since the epoch of a pub_date as the generator writes them (UTC, `Z` or `+0000`)."""
    if not isinstance(text, str):
        return None
    text = text.replace("Z", "+00:00")
    if text.endswith("+0000"):
        text = text[:-5] + "+00:00"
    try:
        return datetime.datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def check_sqlite_rows(db_path, count):
    """Exits 1 unless docs holds `count` rows of distinct IDs (asked of the sqlite3 program)."""
    total = subprocess.run(["sqlite3", str(db_path), "SELECT count(*), count(DISTINCT id) FROM docs;"], check=True,
                           capture_output=True, text=True).stdout.strip()
    if total != f"{count}|{count}":
        log(f"sqlite3: expected {count} distinct rows, found {total}")
        sys.exit(1)


if __name__ == "__main__":
    if sys.argv[1:] != ["spawner"]:
        sys.exit("bench/benchkit.py is the module the benchmarks share; as a program it is only their spawner "
                 "(argument: spawner)")
    serve_spawner()
