#!/usr/bin/env python3
"""The changes feed: how soon a follower prints a change after its commit, and what it costs idle.

Usage: python3 bench/changes.py [--changes N] [--idle S] [--skip-build] [--workdir DIR]

Builds the release binary (unless --skip-build), makes a data folder, starts a follower
(`archivist changes --follow --format jsonl`) and, as a peer on the same writes, `tail -F` of
index.jsonl (GNU tail, which also waits on inotify). One writer process then commits N changes
back to back (a script of `put` lines on stdin, one commit each). Latency is measured per change,
from its `updated_at` (the writer's clock when the commit began, before its writes and syncs, so
the figure is an upper bound) to the moment the line reaches this script through the follower's
pipe. Idleness: the CPU time (user + system, from /proc) each follower uses over S idle seconds.
Prints a table side by side; whole processes, this machine.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone

from benchkit import binaries, cpu_seconds


def parse_time(text):
    return datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc).timestamp()


class Reader(threading.Thread):
    """Reads a follower's lines as they come, noting when each arrived."""

    def __init__(self, process):
        super().__init__(daemon=True)
        self.process = process
        self.arrivals = []  # (arrival time, parsed line)

    def run(self):
        for raw in self.process.stdout:
            now = time.time()
            try:
                self.arrivals.append((now, json.loads(raw)))
            except ValueError:
                pass


def latencies(arrivals, key_of_time, first_id):
    out = []
    for arrived, line in arrivals:
        if not str(line.get("id", "")).startswith(first_id):
            continue
        stamp = key_of_time(line)
        if stamp:
            out.append((arrived - parse_time(stamp)) * 1000)
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--changes", type=int, default=1000)
    parser.add_argument("--idle", type=float, default=10)
    parser.add_argument("--skip-build", action="store_true")
    parser.add_argument("--workdir")
    args = parser.parse_args()
    binary = str(binaries(None, args.skip_build, ["archivist"])[0])
    work = tempfile.mkdtemp(dir=args.workdir)
    data = os.path.join(work, "data")
    try:
        subprocess.run([binary, "--data", data, "put", "seed", '{"n":0}'], check=True, stdout=subprocess.DEVNULL)
        follower = subprocess.Popen(
            [binary, "--data", data, "changes", "--follow", "--since", "1", "--format", "jsonl"],
            stdout=subprocess.PIPE, text=True)
        tail = subprocess.Popen(["tail", "-n", "0", "-F", os.path.join(data, "index.jsonl")], stdout=subprocess.PIPE, text=True)
        readers = [Reader(follower), Reader(tail)]
        for reader in readers:
            reader.start()
        time.sleep(1)
        # Idle: nothing is written for a while.
        before = [cpu_seconds(p.pid) for p in (follower, tail)]
        time.sleep(args.idle)
        idle = [cpu_seconds(p.pid) - b for p, b in zip((follower, tail), before)]
        # The writes: one process, one commit a line.
        script = "".join(f"put c{n} '{{\"n\":{n},\"headline\":{{\"main\":\"Change {n}\"}}}}'\n" for n in range(args.changes))
        started = time.time()
        subprocess.run([binary, "--data", data], input=script, text=True, check=True, stdout=subprocess.DEVNULL)
        written = time.time() - started
        deadline = time.time() + 30
        while time.time() < deadline and min(
            sum(1 for _, l in r.arrivals if str(l.get("id", "")).startswith("c")) for r in readers) < args.changes:
            time.sleep(0.05)
        results = [
            latencies(readers[0].arrivals, lambda l: l.get("updated_at"), "c"),
            latencies(readers[1].arrivals, lambda l: l.get("updated_at") or l.get("removed_at"), "c"),
        ]
        for process in (follower, tail):
            process.terminate()
            process.wait()
        print(f"\nChanges feed: {args.changes} changes committed back to back by one writer in {written:.2f} s "
              f"({args.changes / written:.0f}/s); follower idle {args.idle:.0f} s\n")
        print(f"| follower | changes seen | median latency | max latency | CPU over {args.idle:.0f} s idle |")
        print("|---|---:|---:|---:|---:|")
        for name, values, cpu in zip(["archivist changes --follow", "tail -F index.jsonl (peer)"], results, idle):
            if values:
                print(f"| {name} | {len(values)} | {statistics.median(values):.1f} ms | {max(values):.1f} ms | {cpu * 1000:.0f} ms |")
            else:
                print(f"| {name} | 0 | - | - | {cpu * 1000:.0f} ms |")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
