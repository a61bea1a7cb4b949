#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""results/check-times.tsv: how long each suite of tests/run-all.sh took.

    check-times.py [--tier check|vm] --start EPOCH --start-load "L1 L5 L15" --summary TEXT [LOGDIR]

--tier vm (tests/run-all.sh --tier vm, make check-vm) writes
results/check-vm-times.tsv instead.

LOGDIR (build/test-logs) holds a log per suite, NAME.log, with its
"=== NAME: took Ns" line; logs older than --start (a suite this run
skipped) are not read. --start: when the suites started (date +%s);
with MMTUNE_CHECK_T0 (date +%s when "make check" or scripts/dev.sh
started) the time before that, building what was missing, is a row too.
--summary: the "N passed, N failed, N skipped" of the run, the table's
note. The kernels are those the suites booted (build/LINE/kernel, their
kernel.release).
"""
import argparse
import glob
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from results import REPO, ResultError, write  # noqa: E402

TOOK = re.compile(r"^=== (\S+): took (\d+)s$", re.M)


def suite_times(logdir, start):
    """[(suite, seconds)] from the logs written since start, in the order
    the suites ended."""
    times = []
    logs = [p for p in glob.glob(os.path.join(logdir, "*.log")) if os.path.getmtime(p) >= start]
    for path in sorted(logs, key=os.path.getmtime):
        with open(path, errors="replace") as f:
            times += [(m.group(1), int(m.group(2))) for m in TOOK.finditer(f.read())]
    return times


def kernels():
    out = []
    for path in sorted(glob.glob(os.path.join(REPO, "build", "*", "kernel", "include", "config", "kernel.release"))):
        with open(path) as f:
            out.append(f.read().strip())
    return ", ".join(out) or None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tier", choices=("check", "vm"), default="check")
    p.add_argument("--start", type=int, required=True)
    p.add_argument("--start-load", required=True)
    p.add_argument("--summary", required=True)
    p.add_argument("logdir", nargs="?", default=os.path.join(REPO, "build", "test-logs"))
    a = p.parse_args()
    times = suite_times(a.logdir, a.start)
    if not times:
        print(f"check-times: no '=== NAME: took Ns' line in {a.logdir}/*.log", file=sys.stderr)
        return 1
    rows = ["step\tseconds"]
    t0 = os.environ.get("MMTUNE_CHECK_T0")
    if t0:
        rows.append(f"building what was missing\t{a.start - int(t0)}")
    rows += [f"suite {name}\t{s}" for name, s in times]
    rows.append(f"all suites\t{int(time.time()) - a.start}")
    try:
        name, command = {"check": ("check-times", "tests/run-all.sh (make check)"),
                         "vm": ("check-vm-times", "tests/run-all.sh --tier vm (make check-vm)")}[a.tier]
        path = write(name, command, "\n".join(rows), kernel=kernels(),
                     start_load=a.start_load, note=f"tests: {a.summary}.")
    except ResultError as e:
        print(f"check-times: {e}", file=sys.stderr)
        return 1
    print(f"check-times: {os.path.relpath(path, REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
