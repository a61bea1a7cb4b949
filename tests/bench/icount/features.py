#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""The tables of tests/bench/icount-features.sh.

    features.py [--tables OUT] DIR...
                          DIR: build/icount/features/SET-CONFIG, run.sh's
                          report directories; CONFIG one of unpatched,
                          unloaded, off, on, upstream (another kernel line
                          without the series: the peer, --peer)

--tables OUT: also write OUT/ops.tsv (per operation, kernel instructions
per op of each configuration and their changes) and OUT/goals.tsv (each
goal, its figure, met or not met), tab-separated with a header row, for
tests/bench/results.py.

Per set and phase, one row per configuration: mean kernel instructions per
op over every round of every boot, the change against unpatched (and, for
"on", against "off"), spin-lock calls per op, zone->lock and si->lock
takers' calls per op, and the spread of the rounds. Then the kernel
functions whose instructions per op changed most between configurations,
and the figures of the issue's goals. With an "upstream" column, per
operation mmtune ("on" where the set has a feature on, else "off") against
upstream's own implementation, and where mmtune costs more, the functions
that make the difference.
"""
import collections
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from report import LOCKS, TRYLOCKS, parse, read_phases, spread  # noqa: E402

CONFIGS = ("unpatched", "unloaded", "off", "on", "upstream")
ZONE_LOCK = ("rmqueue_bulk", "free_pcppages_bulk", "free_one_page",
             "rmqueue_buddy")
SI_LOCK = ("get_swap_pages", "get_swap_pages_batch", "swapcache_free_entries")
FEATURE = {"mem": "pcp_high", "disk": "swap_slots", "zram": "swap_slots",
           "zswap": "swap_slots", "zswapthp": "zswap_large",
           "split": "split_zero", "cross": "pcp_high",
           "thpsparse": "thp_swap", "zswap64": "zswap_large",
           "zswap16": "zswap_large", "cgfault": "cgroup_policy",
           "cgfault64": "cgroup_policy", "cgfault16": "cgroup_policy",
           "zswapbad": "zswap_large"}
SETS = ("mem", "disk", "zram", "zswap", "zswapthp", "zswap64", "zswap16",
        "zswapbad", "split", "cross", "thpsparse", "cgfault", "cgfault64",
        "cgfault16")
# The kernel's memset, by name: 6.1's __memset, 6.12's memset_orig (qemu64
# has no ERMS, so not memset_erms).
MEMSET = ("__memset", "memset_orig", "memset_erms")
# Folio stores: 4K pages per op, and whether the issue's goals name it.
FOLIO = {"zswapthp": (512, "2M THP", True), "zswap64": (16, "64K mTHP", True),
         "zswap16": (4, "16K mTHP", False)}
# The store phase of each folio set; the others of its set (the swap-in
# phases, thp64in and thp16in) read back what it wrote.
FOLIO_OUT = ("thpout", "thp64out", "thp16out")
FOLIO_IN = ("thp64in", "thp16in")
# What 'on' means where it is more than the set's feature alone.
ON = {"thpsparse": "thp_swap and split_zero on",
      "cgfault": "cgroup_policy on, 1000 entries", "cgfault64": "cgroup_policy on, 1000 entries",
      "cgfault16": "cgroup_policy on, 1000 entries"}


def on_knobs(d):
    """The mmtune knobs the configuration's prep script wrote."""
    try:
        with open(os.path.join(d, "report.txt")) as f:
            text = f.read()
    except OSError:
        return None
    w = re.findall(r"^prep: echo (\S+) >/sys/kernel/mm/mmtune/(\S+)$", text, re.M)
    return ", ".join(f"{k}={v}" for v, k in w) or None


def load(d):
    with open(os.path.join(d, "report.txt")) as f:
        ops = int(re.search(r"(\d+) ops per round", f.read()).group(1))
    runs = [parse(p) for p in sorted(glob.glob(os.path.join(d, "run-*.txt")))]
    return ops, runs, read_phases(os.path.join(d, "work", "phases.txt"))


class Col:
    """One configuration's rounds of one phase."""

    def __init__(self, ops, runs, pid):
        self.ops = ops
        self.runs = [[m for m in r if m["id"] == pid] for r in runs]
        self.all = [m for r in self.runs for m in r]
        self.n = len(self.all) * ops

    def kernel(self):
        return sum(m["kernel"] for m in self.all) / self.n

    def calls(self, names):
        return sum(m["calls"].get(x, 0) for m in self.all for x in names) / self.n

    def funcs(self):
        c = collections.Counter()
        for m in self.all:
            c.update(m["funcs"])
        return {k: v / self.n for k, v in c.items()}

    def spreads(self):
        k = [[m["kernel"] for m in r] for r in self.runs if r]
        every = [v for r in k for v in r]
        means = [sum(r) / len(r) for r in k]
        return spread(every), spread(means)


def no_lz4(col):
    """Kernel insns per op without the LZ4 compressor's functions."""
    return col.kernel() - sum(v for f, v in col.funcs().items()
                              if f.startswith("LZ4_"))


def diff_funcs(a, b, n=4):
    """The functions whose insns per op grew (or shrank) most from a to b."""
    fa, fb = a.funcs(), b.funcs()
    d = {f: fb.get(f, 0) - fa.get(f, 0) for f in set(fa) | set(fb)}
    top = sorted(d.items(), key=lambda x: (-abs(x[1]), x[0]))[:n]
    return ", ".join(f"{f} {v:+.1f}" for f, v in top if abs(v) >= 0.05)


def vs_unpatched(row, c):
    """(change in %, as shown) of configuration c against unpatched: the
    compressor's count moves between kernel builds although its code is
    the same and no hook is on its path (LZ4 +-254 per 4K page, unloaded
    vs unpatched), so where the set compresses, without LZ4_*."""
    base = row["unpatched"]
    v = (row[c].kernel() / base.kernel() - 1) * 100
    if not any(f.startswith("LZ4_") for f in base.funcs()):
        return v, f"{v:+.3f}%"
    v2 = (no_lz4(row[c]) / no_lz4(base) - 1) * 100
    return v2, f"{v2:+.3f}% without LZ4_*, {v:+.3f}% with"


def ops_row(s, name, row, configs):
    """The cells of OUT/ops.tsv for one operation."""
    cells = [f"{s} / {name}"] + [f"{row[c].kernel():.1f}" if c in row else "-" for c in configs]
    for c in ("unloaded", "off"):
        cells.append(vs_unpatched(row, c)[1] if "unpatched" in row and c in row else "-")
    cells.append(f"{(row['on'].kernel() / row['off'].kernel() - 1) * 100:+.2f}%"
                 if "on" in row and "off" in row else "-")
    if "upstream" in configs:
        mc = "on" if "on" in row else "off"
        cells.append(f"{(row[mc].kernel() / row['upstream'].kernel() - 1) * 100:+.2f}% ({mc})"
                     if mc in row and "upstream" in row else "-")
    return cells


def write_tables(out, configs, ops, goals):
    """OUT/ops.tsv and OUT/goals.tsv."""
    os.makedirs(out, exist_ok=True)
    head = (["set / op"] + list(configs) + ["unloaded vs unpatched", "off vs unpatched", "on vs off"]
            + (["mmtune vs upstream"] if "upstream" in configs else []))
    for fname, rows in (("ops.tsv", [head] + ops),
                        ("goals.tsv", [["goal", "measured", "met"]]
                         + [[w, v, "met" if ok else "not met"] for w, v, ok in goals])):
        with open(os.path.join(out, fname), "w") as f:
            f.writelines("\t".join(r) + "\n" for r in rows)


def peer(s, name, row):
    """mmtune against the upstream kernel's own implementation."""
    mc = "on" if "on" in row else "off" if "off" in row else "unloaded"
    if mc not in row:
        return
    mm, up = row[mc], row["upstream"]
    d = mm.kernel() - up.kernel()
    line = (f"  mmtune ({mc}) vs upstream: {mm.kernel():.1f} vs {up.kernel():.1f} "
            f"per op, {d:+.1f} ({(mm.kernel() / up.kernel() - 1) * 100:+.2f}%)")
    if any(f.startswith("LZ4_") for f in up.funcs()):
        d2 = no_lz4(mm) - no_lz4(up)
        line += (f"; without LZ4_* {no_lz4(mm):.1f} vs {no_lz4(up):.1f}, "
                 f"{d2:+.1f} ({(no_lz4(mm) / no_lz4(up) - 1) * 100:+.2f}%)")
    print(line)
    if s in FOLIO:
        pages = FOLIO[s][0]
        print(f"  per 4K: mmtune {mm.kernel() / pages:.0f}, upstream "
              f"{up.kernel() / pages:.0f}")
    fm, fu = mm.funcs(), up.funcs()
    diff = {f: fm.get(f, 0) - fu.get(f, 0) for f in set(fm) | set(fu)}
    more = sorted(((f, v) for f, v in diff.items() if v >= 0.5), key=lambda x: -x[1])[:8]
    less = sorted(((f, v) for f, v in diff.items() if v <= -0.5), key=lambda x: x[1])[:5]
    print("  mmtune costs more in: " + (", ".join(f"{f} {v:+.1f}" for f, v in more) or "-"))
    print("  upstream costs more in: " + (", ".join(f"{f} {-v:+.1f}" for f, v in less) or "-"))


def main():
    data, label = {}, {}
    args = sys.argv[1:]
    tables = args[1] if args[:1] == ["--tables"] else None
    for d in args[2:] if tables else args:
        s, c = os.path.basename(d.rstrip("/")).split("-", 1)
        data.setdefault(s, {})[c] = load(d)
        if c == "on":
            label[s] = on_knobs(d)
    goals, ops = [], []
    configs = [c for c in CONFIGS if any(c in cols for cols in data.values())]
    for s in SETS:
        if s not in data:
            continue
        cols = data[s]
        phases = next(iter(cols.values()))[2]
        for pid, name, what in phases:
            row = {c: Col(cols[c][0], cols[c][1], pid) for c in CONFIGS if c in cols}
            if not any(col.all for col in row.values()):
                continue
            row = {c: col for c, col in row.items() if col.all}
            first = next(iter(row.values()))
            print(f"\n== {s} / {name}: one op = {what}; {first.ops} ops x "
                  f"{len(first.all)} rounds per configuration; 'on' = "
                  f"{label.get(s) or ON.get(s, FEATURE[s] + ' on')}")
            print(f"{'config':<10} {'kernel/op':>11} {'vs unpatched':>12} "
                  f"{'vs off':>8} {'locks/op':>9} {'trylock/op':>10} "
                  f"{'zone-lock/op':>12} {'si-lock/op':>10} "
                  f"{'spread':>7} {'runs':>7}")
            base = row["unpatched"].kernel() if "unpatched" in row else None
            for c, col in row.items():
                k = col.kernel()
                vs_u = f"{(k / base - 1) * 100:+.3f}%" if base else "-"
                vs_off = (f"{(k / row['off'].kernel() - 1) * 100:+.2f}%"
                          if c == "on" and "off" in row else "")
                sp_all, sp_means = col.spreads()
                print(f"{c:<10} {k:>11.1f} {vs_u:>12} {vs_off:>8} "
                      f"{col.calls(LOCKS):>9.3f} {col.calls(TRYLOCKS):>10.3f} "
                      f"{col.calls(ZONE_LOCK):>12.4f} {col.calls(SI_LOCK):>10.4f} "
                      f"{sp_all:>6.3f}% {sp_means:>6.3f}%")
            for a, b in (("unpatched", "unloaded"), ("unloaded", "off"), ("off", "on")):
                if a in row and b in row:
                    print(f"  {a} -> {b}: {diff_funcs(row[a], row[b])}")
            if "upstream" in row:
                peer(s, name, row)
                if s in FOLIO and name in FOLIO_OUT and "on" in row:
                    # Judged without LZ4_*, as the hooks' goals: the same
                    # compressor code counts differently per kernel build.
                    mm, up = row["on"], row["upstream"]
                    v = (mm.kernel() / up.kernel() - 1) * 100
                    v2 = (no_lz4(mm) / no_lz4(up) - 1) * 100
                    goals.append((f"zswap_large: a whole {FOLIO[s][1]} store vs upstream's",
                                  f"{v2:+.2f}% without `LZ4_*`, {v:+.2f}% with (goal <= 0)", v2 <= 0))
            ops.append(ops_row(s, name, row, configs))
            if base and s != "cross":
                # The hooks' goals are judged without LZ4_* (vs_unpatched);
                # both are printed.
                if any(f.startswith("LZ4_") for f in row["unpatched"].funcs()):
                    b2 = no_lz4(row["unpatched"])
                    print("  without LZ4_*: " + ", ".join(
                        f"{c} {no_lz4(col):.1f}"
                        + ("" if c == "unpatched" else f" ({(no_lz4(col) / b2 - 1) * 100:+.3f}%)")
                        for c, col in row.items() if c != "on"))
                for c, lim in (("unloaded", 0.1), ("off", 0.3)):
                    if c not in row:
                        continue
                    v, shown = vs_unpatched(row, c)
                    goals.append((f"hooks {c} vs unpatched, {s}/{name}",
                                  f"{shown} (goal <= +{lim}%)", v <= lim))
            if "on" in row and "off" in row:
                on, off = row["on"], row["off"]
                if s == "mem":
                    v = (on.kernel() / off.kernel() - 1) * 100
                    goals.append((f"pcp_high on vs off, {name}",
                                  f"{v:+.2f}% (goal <= +1%)", v <= 1))
                if s == "cross":
                    for st in ("unpatched", "off"):
                        if st in row and row[st].calls(ZONE_LOCK):
                            r = on.calls(ZONE_LOCK) / row[st].calls(ZONE_LOCK)
                            print(f"  zone->lock takers per 1000 allocations: on "
                                  f"{on.calls(ZONE_LOCK) * 1000:.1f}, {st} "
                                  f"{row[st].calls(ZONE_LOCK) * 1000:.1f}: {r:.2f}x")
                            goals.append((f"pcp_high zone->lock per 1000 allocs, 2 vCPUs, vs {st}",
                                          f"{r:.2f}x (goal <= 0.2x)", r <= 0.2))
                if s == "split":
                    # The zero test per subpage: pages_identical() with the
                    # zero page (memcmp_pages() -> memcmp(), since issue 26
                    # item 6: tag-aware on arm64 MTE), memchr_inv() before.
                    fn = on.funcs()
                    tests = ("memcmp", "memchr_inv")
                    f = sum(fn.get(x, 0) for x in tests)
                    calls = on.calls(tests)
                    extra = on.kernel() - off.kernel()
                    per = f / calls if calls else 0
                    print(f"  zero test (memcmp, memchr_inv): {calls:.1f} calls "
                          f"per split, {f:.0f} insns, {per:.0f} per subpage; "
                          f"split_zero adds {extra:.0f} per split, "
                          f"{extra / f if f else 0:.2f}x its zero tests")
                    goals.append(("split_zero reads each subpage once: zero tests per split",
                                  f"{calls:.1f} (goal <= 1.1 x 512)",
                                  calls <= 1.1 * 512))
                if s in FOLIO and name in FOLIO_IN and "zswap" in data:
                    # A folio loaded whole from zswap against its pages
                    # loaded one by one (the 4K zswap swap-in).
                    pages, fname, _ = FOLIO[s]
                    z = data["zswap"]
                    for c4 in ("on", "off", "unloaded"):
                        pp = [p for p in z[c4][2] if p[1] == "swapin"] if c4 in z else []
                        if pp:
                            four = Col(z[c4][0], z[c4][1], pp[0][0]).kernel()
                            v = on.kernel() / pages
                            print(f"  per 4K page: {fname} swap-in {v:.0f} kernel insns "
                                  f"(off {off.kernel() / pages:.0f}); 4K zswap swap-in ({c4}) {four:.0f}")
                            goals.append((f"zswap_large: per 4K of a whole {fname} load vs 4K zswap swap-in ({c4})",
                                          f"{v:.0f} vs {four:.0f} (goal: fewer)", v < four))
                            break
                if s in FOLIO and name in FOLIO_OUT:
                    pages, fname, goal = FOLIO[s]
                    fn = on.funcs()
                    comp = sum(v for k, v in fn.items() if k.startswith("LZ4_"))
                    # LZ4_compress_fast_extState() starts with
                    # LZ4_resetStream(): a memset of its 16 KiB state, rep
                    # stosq, 2052 counted iterations per 4K page; zswap's
                    # store calls no other memset.
                    mset = sum(fn.get(x, 0) for x in MEMSET)
                    share = comp / on.kernel() * 100
                    share_m = (comp + mset) / on.kernel() * 100
                    print(f"  compressor: LZ4_* {comp:.0f} + its state reset "
                          f"(memset) {mset:.0f} of {on.kernel():.0f} kernel "
                          f"insns per {fname}: {share:.1f}% ({share_m:.1f}% with "
                          f"the reset); per 4K stored {on.kernel() / pages:.1f}")
                    if goal:
                        goals.append((f"zswap_large: compressor share of a {fname} store (LZ4_* + its memset)",
                                      f"{share_m:.1f}% ({share:.1f}% without the memset; goal >= 75%)",
                                      share_m >= 75))
                    if "zswap" in data:
                        for c4 in ("off", "unloaded"):
                            if c4 not in data["zswap"]:
                                continue
                            z = data["zswap"][c4]
                            pp = [p for p in z[2] if p[1] == "pageout"]
                            if not pp:
                                continue
                            zc = Col(z[0], z[1], pp[0][0])
                            four, v = zc.kernel(), on.kernel() / pages
                            zf = zc.funcs()
                            comp4 = (sum(x for k, x in zf.items() if k.startswith("LZ4_"))
                                     + sum(zf.get(x, 0) for x in MEMSET))
                            print(f"  per 4K page: whole {fname} {v:.0f} kernel insns, of which "
                                  f"the compressor {(comp + mset) / pages:.0f} and the rest "
                                  f"{v - (comp + mset) / pages:.0f}; 4K zswap pageout ({c4}) "
                                  f"{four:.0f}, compressor {comp4:.0f}, the rest {four - comp4:.0f}")
                            if goal:
                                goals.append((f"zswap_large: per 4K of a whole {fname} vs 4K zswap pageout ({c4})",
                                              f"{v:.0f} vs {four:.0f} (goal: fewer)", v < four))
                            break
                if s == "zswapbad" and "on" in data.get("zswapthp", {}):
                    # A bad tail stored raw costs about what a good THP does,
                    # not 511 compressions thrown away.
                    z = data["zswapthp"]["on"]
                    good = Col(z[0], z[1], [p for p in z[2] if p[1] == "thpout"][0][0]).kernel()
                    r = on.kernel() / good
                    goals.append(("zswap_large: a 2M THP with a bad tail vs a good one (thpout), on",
                                  f"{r:.3f}x (goal <= 1.05x)", r <= 1.05))
                if FEATURE[s] == "cgroup_policy":
                    # The lookup: what "on" adds to a fault over "off".
                    v = (on.kernel() / off.kernel() - 1) * 100
                    print(f"  cgroup_policy lookup: {on.kernel() - off.kernel():.0f} kernel insns per fault")
                    goals.append((f"cgroup_policy on (1000 entries) vs off, {name}",
                                  f"{v:+.3f}%, lookup {on.kernel() - off.kernel():.0f} insns (goal <= +1%)",
                                  v <= 1))
                if s in ("disk", "zram", "zswap") and name == "pageout":
                    for c in ("off", "on"):
                        print(f"  si-lock takers per slot ({c}): "
                              f"{row[c].calls(SI_LOCK):.4f} (goal on: <= {1 / 256:.4f})")
                    goals.append((f"swap_slots si-lock takers per slot, {s}",
                                  f"{on.calls(SI_LOCK):.4f} (goal <= 0.0039)",
                                  on.calls(SI_LOCK) <= 1 / 256))
                    goals.append((f"swap_slots kernel/op vs stock cache, {s}/pageout",
                                  f"{on.kernel():.0f} vs {off.kernel():.0f} (goal: not higher)",
                                  on.kernel() <= off.kernel()))
    if goals:
        print("\n== goals (issue 15, point 4)")
        for what, val, ok in goals:
            print(f"  {'met    ' if ok else 'NOT MET'}  {what}: {val}")
    if tables:
        write_tables(tables, configs, ops, goals)
    return 0


if __name__ == "__main__":
    sys.exit(main())
