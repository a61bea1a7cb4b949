#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Tables from icount.so's records (tests/bench/icount/run.sh calls this).

    report.py --phases PHASES.txt --ops N [--top N] RUN.txt...
    report.py --compare build/icount/A build/icount/B...

--compare puts run.sh's report directories side by side: per phase the
mean kernel instructions per op of each, its change against the first,
user instructions, lock calls per op and the spread of its rounds.

PHASES.txt is "icount-work --list". Each RUN.txt is one boot's records;
mark N (N > 0) closes one round of phase N. Per phase it prints, per run
and round, kernel and user instructions per op, spin-lock calls per op,
page clears per op and kernel rep-string iterations per op; the spread of
kernel instructions per op; the calls per lock entry point; and the top
kernel functions by instructions per op.
"""
import argparse
import collections
import sys

LOCKS = ("_raw_spin_lock", "_raw_spin_lock_irqsave", "_raw_spin_lock_irq",
         "_raw_spin_lock_bh")
TRYLOCKS = ("_raw_spin_trylock",)
SLOWPATHS = ("queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath",
             "__pv_queued_spin_lock_slowpath")
CLEARS = ("clear_page_erms", "clear_page_rep", "clear_page_orig")


def parse(path):
    """List of rounds: dicts with the mark's fields, calls, funcs, reps."""
    marks = []
    cur = None
    with open(path) as f:
        for line in f:
            kind, *fields = line.split()
            kv = dict(x.split("=", 1) for x in fields if "=" in x)
            if kind == "mark":
                cur = {k: int(v) for k, v in kv.items()}
                cur.update(calls={}, funcs={}, reps={})
                marks.append(cur)
            elif cur is None:
                continue
            elif kind == "call":
                cur["calls"][kv["name"]] = int(kv["n"])
            elif kind == "func":
                f = cur["funcs"]
                f[kv["name"]] = f.get(kv["name"], 0) + int(kv["insns"])
            elif kind == "rep":
                r = cur["reps"]
                r[kv["name"]] = r.get(kv["name"], 0) + int(kv["n"])
    return marks


def spread(values):
    """(max - min) / min in percent."""
    lo = min(values)
    return (max(values) - lo) / lo * 100 if lo else 0.0


def read_phases(path):
    phases = []
    with open(path) as f:
        for line in f:
            pid, name, what = line.rstrip("\n").split(" ", 2)
            phases.append((int(pid), name, what))
    return phases


def compare(dirs):
    """Side by side: mean counts per op of each report directory, and the
    change against the first."""
    import glob
    import os
    import re

    cols = []
    for d in dirs:
        with open(os.path.join(d, "report.txt")) as f:
            ops = int(re.search(r"(\d+) ops per round", f.read()).group(1))
        runs = [parse(p) for p in sorted(glob.glob(os.path.join(d, "run-*.txt")))]
        cols.append((os.path.basename(d.rstrip("/")), ops, runs))
    phases = read_phases(os.path.join(dirs[0], "work", "phases.txt"))
    print(f"{'phase':<10} {'kernel':<28} {'kernel/op':>10} {'change':>8} "
          f"{'user/op':>8} {'locks/op':>8} {'trylock/op':>10} {'spread':>7}")
    for pid, name, _ in phases:
        base = None
        for label, ops, runs in cols:
            ms = [m for r in runs for m in r if m["id"] == pid]
            if not ms:
                continue
            k = [m["kernel"] / ops for m in ms]
            mean = sum(k) / len(k)
            base = base or mean
            n = len(ms) * ops
            locks = sum(m["calls"].get(x, 0) for m in ms for x in LOCKS) / n
            tl = sum(m["calls"].get(x, 0) for m in ms for x in TRYLOCKS) / n
            user = sum(m["user"] for m in ms) / n
            print(f"{name:<10} {label:<28} {mean:>10.2f} "
                  f"{(mean / base - 1) * 100:>+7.2f}% {user:>8.2f} "
                  f"{locks:>8.3f} {tl:>10.3f} {spread(k):>6.3f}%")
    return 0


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--compare":
        return compare(sys.argv[2:])
    ap = argparse.ArgumentParser()
    ap.add_argument("--phases", required=True)
    ap.add_argument("--ops", type=int, required=True)
    ap.add_argument("--top", type=int, default=10)
    ap.add_argument("--rounds", type=int, help="expected rounds per run")
    ap.add_argument("runs", nargs="+")
    a = ap.parse_args()

    phases = read_phases(a.phases)
    runs = [parse(p) for p in a.runs]
    ops = a.ops
    bad = False

    for pid, name, what in phases:
        per_run = [[m for m in marks if m["id"] == pid] for marks in runs]
        if not any(per_run):
            continue
        if a.rounds and any(len(r) != a.rounds for r in per_run):
            print(f"{name}: expected {a.rounds} rounds per run, got "
                  f"{[len(r) for r in per_run]} (a mark missed or doubled)")
            bad = True
        elif len({len(r) for r in per_run}) != 1:
            print(f"{name}: runs have different round counts: "
                  f"{[len(r) for r in per_run]}")
            bad = True
        print(f"\n== {name}: one op = {what}; {ops} ops per round")
        print(f"{'run':>3} {'round':>5} {'kernel/op':>11} {'user/op':>9} "
              f"{'locks/op':>9} {'trylock/op':>10} {'slowpath/op':>11} "
              f"{'clear_page/op':>13} "
              f"{'rep-iter/op':>11}")
        for ri, rounds in enumerate(per_run, 1):
            for k, m in enumerate(rounds, 1):
                c = m["calls"]
                print(f"{ri:>3} {k:>5} {m['kernel'] / ops:>11.2f} "
                      f"{m['user'] / ops:>9.2f} "
                      f"{sum(c.get(x, 0) for x in LOCKS) / ops:>9.3f} "
                      f"{sum(c.get(x, 0) for x in TRYLOCKS) / ops:>10.3f} "
                      f"{sum(c.get(x, 0) for x in SLOWPATHS) / ops:>11.3f} "
                      f"{sum(c.get(x, 0) for x in CLEARS) / ops:>13.3f} "
                      f"{m['rep_kernel'] / ops:>11.2f}")
        kern = [[m["kernel"] for m in r] for r in per_run]
        within = max(spread(r) for r in kern if r)
        same = max((spread([r[k] for r in kern if len(r) > k])
                    for k in range(max(len(r) for r in kern))), default=0)
        means = [sum(r) / len(r) for r in kern if r]
        every = [v for r in kern for v in r]
        print(f"spread of kernel insns (max-min)/min: rounds within a run "
              f"{within:.3f}%, same round across runs {same:.3f}%, run means "
              f"{spread(means):.3f}%, all rounds {spread(every):.3f}%")
        print(f"kernel insns per op, mean of all rounds: "
              f"{sum(every) / len(every) / ops:.2f} "
              f"(min {min(every) / ops:.2f}, max {max(every) / ops:.2f})")

        allm = [m for r in per_run for m in r]
        n = len(allm) * ops
        calls = collections.Counter()
        funcs = collections.Counter()
        reps = collections.Counter()
        for m in allm:
            calls.update(m["calls"])
            funcs.update(m["funcs"])
            reps.update(m["reps"])
        print("calls per op: " + ", ".join(
            f"{k} {v / n:.3f}" for k, v in sorted(calls.items()) if v))
        ktotal = sum(m["kernel"] for m in allm)
        print(f"top {a.top} kernel functions (insns per op, share of kernel "
              f"insns, all rounds):")
        for fn, v in funcs.most_common(a.top):
            print(f"  {v / n:>10.2f} {v / ktotal * 100:>6.2f}%  {fn}")
        if reps:
            print("kernel rep-string iterations per op, by function "
                  "(each counts as one instruction; clear_page_rep: 8 "
                  "bytes each, clear_page_erms: 1):")
            for fn, v in reps.most_common(5):
                print(f"  {v / n:>10.2f}  {fn}")
        if name == "repstos":
            # 4096 + 1 for rep stosb, 512 + 1 for rep stosq, and the
            # loop's few (7 with gcc 12 -O2)
            user = [m["user"] / ops for m in allm]
            ok = all(4612 <= u <= 4630 for u in user)
            print(f"check: repstos user/op {min(user):.2f}..{max(user):.2f}, "
                  f"expected 4610 + the loop's few (each rep iteration "
                  f"counts): {'ok' if ok else 'FAILED'}")
            bad = bad or not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
