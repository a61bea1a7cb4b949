#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Measured results: written by the command that measures, rendered into the docs.

    results.py write NAME --command CMD [--kernel K] [--start-load L] [--note N]
        [--from-report REPORT] <TSV
    results.py time NAME [--label L] -- CMD...
    results.py render [--check]

A result file, results/NAME.tsv, is one table: "# FIELD: value" lines
(command, date, commit, machine required; kernel, note optional), then a
tab-separated header row and one row per line. "write" reads the table
(header and rows) on stdin and adds the fields: the date (UTC), the
commit (with "-dirty" when the tree has changes), the machine (CPUs and
load average; START -> now with --start-load). --from-report: the table
is REPORT's lines that start with "result:" and a tab, or with "# "
before it as the VM runner prints the guest's output (a benchmark's
report, tests/bench/lib-bench.sh's row()), not stdin.

"time" runs CMD and, when it succeeds, puts its row in results/NAME.tsv, a
table of timed commands: the command (or L), its wall-clock seconds, the
load average at its start and end, its date and commit; a row of the same
command is replaced, the others are kept. It exits with CMD's status.

"render" replaces each region
    <!-- results:NAME -->
    ...
    <!-- /results:NAME -->
of the repository's *.md files with results/NAME.tsv as a Markdown table
and the line that says which command made it, where and when. --check
writes nothing: it prints a diff and exits 1 when a region is not the
rendering of its file, and exits 1 when a result file lacks a required
field or a region names no result file.
"""
import argparse
import datetime
import difflib
import os
import re
import subprocess
import sys
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REQUIRED = ("command", "date", "commit", "machine")
REGION = re.compile(r"^<!-- results:(\S+) -->\n(.*?)^<!-- /results:\1 -->$", re.M | re.S)


class ResultError(Exception):
    pass


def results_dir():
    return os.path.join(REPO, "results")


def read(path):
    """(fields, header, rows) of a result file; ResultError names file:line."""
    fields, table = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = re.match(r"# (\w+): (.*)$", line)
            if m and not table:
                fields[m.group(1)] = m.group(2).strip()
            elif line.startswith("#") and not table:
                raise ResultError(f"{path}:{n}: not a '# FIELD: value' line")
            elif line:
                table.append((n, line.split("\t")))
    missing = [k for k in REQUIRED if not fields.get(k)]
    if missing:
        raise ResultError(f"{path}: no {', '.join(missing)} field")
    check_table(table, path)
    return fields, table[0][1], [row for _, row in table[1:]]


def check_table(table, where):
    """table: [(line number, cells)], a header row first."""
    if len(table) < 2:
        raise ResultError(f"{where}: no table (a header row and at least one row)")
    width = len(table[0][1])
    for n, row in table:
        if len(row) != width:
            raise ResultError(f"{where}:{n}: {len(row)} columns, the header has {width}")


def git(*args):
    return subprocess.run(["git", "-C", REPO, *args], capture_output=True,
                          text=True, check=False).stdout.strip()


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def write(name, command, table, kernel=None, start_load=None, note=None, source="stdin"):
    """results/NAME.tsv from TSV text (header and rows) and this host's fields."""
    load = f"{start_load} -> {loadavg()}" if start_load else loadavg()
    fields = {
        "command": command,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%MZ"),
        "commit": commit_id(),
        "machine": f"{os.uname().nodename}, {os.cpu_count()} CPUs, load average {load}",
        "kernel": kernel, "note": note,
    }
    lines = [(n, line) for n, line in enumerate(table.splitlines(), 1) if line.strip()]
    check_table([(n, line.split("\t")) for n, line in lines], f"{name}: {source}")
    os.makedirs(results_dir(), exist_ok=True)
    path = os.path.join(results_dir(), name + ".tsv")
    with open(path + ".new", "w") as f:
        f.write("".join(f"# {k}: {v}\n" for k, v in fields.items() if v))
        f.write("".join(line + "\n" for _, line in lines))
    os.replace(path + ".new", path)
    return path


def commit_id():
    """HEAD, "-dirty" when a tracked file outside results/ and the docs
    changed (a measurement does not depend on those)."""
    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    dirty = git("status", "--porcelain", "--untracked-files=no", "--", ".", ":!results", ":!*.md")
    return commit + "-dirty" if dirty else commit


def time_command(name, label, cmd):
    """Run cmd; on success its row in results/NAME.tsv. Returns its status."""
    load0, t0 = loadavg(), time.monotonic()
    status = subprocess.call(cmd)
    if status != 0:
        print(f"results: {name}.tsv: {label} not recorded, it exited {status}", file=sys.stderr)
        return status
    row = [label, str(round(time.monotonic() - t0)), f"{load0} -> {loadavg()}",
           datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%MZ"), commit_id()]
    header, rows = ["command", "seconds", "load average", "date", "commit"], []
    path = os.path.join(results_dir(), name + ".tsv")
    if os.path.exists(path):
        _, header, rows = read(path)
    rows = [r for r in rows if r[0] != label] + [row]
    write(name, f"tests/bench/results.py time {name} -- COMMAND (a row per command)",
          "\n".join("\t".join(r) for r in [header] + rows),
          note="Each row: one command's latest successful run on this machine.")
    return 0


ISO_DATE = re.compile(r"20[0-9]{2}-[01][0-9]-[0-3][0-9] [0-2][0-9]:[0-5][0-9]Z")


def human_date(date):
    """'2026-11-27 10:02Z' as '27 Nov 2026' (the docs carry no ISO dates)."""
    d = datetime.date.fromisoformat(date[:10])
    return f"{d.day} {d.strftime('%b %Y')}"


def render(name):
    """The Markdown of results/NAME.tsv, as a region holds it."""
    fields, header, rows = read(os.path.join(results_dir(), name + ".tsv"))

    def cell(c):
        # A time row's date cell, as the caption's (no ISO dates in docs).
        c = human_date(c) if ISO_DATE.fullmatch(c) else c
        return c.replace("|", "\\|")

    def cells(row):
        return "| " + " | ".join(cell(c) for c in row) + " |\n"

    out = cells(header) + "|" + "---|" * len(header) + "\n"
    out += "".join(cells(r) for r in rows)
    out += (f"\nFrom `{fields['command']}` at commit {fields['commit']}, "
            f"{human_date(fields['date'])}; {fields['machine']}")
    if fields.get("kernel"):
        out += f"; kernel: {fields['kernel']}"
    out += "."
    if fields.get("note"):
        out += f" {fields['note']}"
    return out + f" (`results/{name}.tsv`)\n"


def docs():
    files = git("ls-files", "*.md").splitlines()
    return [os.path.join(REPO, f) for f in files if os.path.exists(os.path.join(REPO, f))]


def render_all(check):
    """Render every region; returns the exit status. Writes nothing if a
    result file or a region is wrong."""
    status, changed = 0, []
    for name in sorted(os.listdir(results_dir())) if os.path.isdir(results_dir()) else []:
        if name.endswith(".tsv"):
            try:
                read(os.path.join(results_dir(), name))
            except ResultError as e:
                print(f"render-results: {e}", file=sys.stderr)
                status = 1
    for path in docs():
        with open(path) as f:
            old = f.read()

        def region(m):
            nonlocal status
            try:
                return f"<!-- results:{m.group(1)} -->\n{render(m.group(1))}<!-- /results:{m.group(1)} -->"
            except (OSError, ResultError) as e:
                line = old.count("\n", 0, m.start()) + 1
                print(f"render-results: {os.path.relpath(path, REPO)}:{line}: {e}", file=sys.stderr)
                status = 1
                return m.group(0)

        new = REGION.sub(region, old)
        if new == old:
            continue
        rel = os.path.relpath(path, REPO)
        if check:
            sys.stdout.writelines(difflib.unified_diff(
                old.splitlines(True), new.splitlines(True), f"a/{rel}", f"b/{rel}"))
            print(f"render-results: {rel} is not rendered from results/ (make results)", file=sys.stderr)
            status = 1
        changed.append((path, rel, new))
    if status == 0 and not check:
        for path, rel, new in changed:
            with open(path, "w") as f:
                f.write(new)
            print(f"render-results: {rel}")
    return status


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="action", required=True)
    w = sub.add_parser("write")
    w.add_argument("name")
    w.add_argument("--command", required=True)
    w.add_argument("--kernel")
    w.add_argument("--start-load")
    w.add_argument("--note")
    w.add_argument("--from-report")
    t = sub.add_parser("time")
    t.add_argument("name")
    t.add_argument("--label")
    t.add_argument("cmd", nargs="+")
    r = sub.add_parser("render")
    r.add_argument("--check", action="store_true")
    a = p.parse_args(argv)
    try:
        if a.action == "write":
            # The guest's output reaches the report as TAP diagnostics:
            # "# result:\t..." (tests/vm/guest/init, tap_diag).
            table = sys.stdin.read() if not a.from_report else "".join(
                line.removeprefix("# ")[len("result:\t"):] for line in open(a.from_report)
                if line.removeprefix("# ").startswith("result:\t"))
            path = write(a.name, a.command, table, a.kernel, a.start_load, a.note, a.from_report or "stdin")
            print(f"results: {os.path.relpath(path, REPO)}", file=sys.stderr)
            return 0
        if a.action == "time":
            return time_command(a.name, a.label or " ".join(a.cmd), a.cmd)
        return render_all(a.check)
    except ResultError as e:
        print(f"results: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
