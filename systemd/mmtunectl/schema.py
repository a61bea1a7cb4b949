"""Every knob mmtunectl knows: one table, the only place to add a knob.

A profile key is valid exactly when it is listed here. Each entry gives the
section and key used in profiles, the live path (relative to the root), the
value type and what provides the file, so that a knob missing on this kernel
can be explained.

The kernel's own knobs (vm sysctls, THP, zswap parameters) are listed below.
mmtune.ko's files are not: they come from knobs.tsv, the machine-readable
table of /sys/kernel/mm/mmtune/ kept in sysfs-docs/ next to the ABI
documents (and installed next to this package). One row per file, tab
separated, with a header line:

  dir  file  type  mode  default  values  constraint  lines

  dir         feature directory under /sys/kernel/mm/mmtune ("." for the root)
  type        bool (0/1), u32, choice, counter (one number, read-only),
              text (read-only, free form), table (lines, rw or ro, read
              to EOF: cgroup_policy/entries, written by cgroups.py, never
              a profile key)
  mode        rw or ro
  default     the value after the module is loaded (choice: the word)
  values      u32: "lo-hi", disjoint ranges joined by ",", e.g. "0,8-10000";
              choice: "a|b|c", every word the kernel accepts; bool: "0|1"
  constraint  a rule against another file of the same dir that the kernel
              enforces on write: "OP FILE" (OP one of < <= > >=), optionally
              followed by "unless N" (the value N is always accepted)
  lines       the kernel lines (6.1, 6.12) whose module has the file, space
              separated; a read-only file may have a row per line, differing
              in its default only (abi_version)

Every rw file but a table becomes the profile key [mmtune.DIR] FILE; counter files are
what status and the Prometheus output show. A feature added to the module
is added to knobs.tsv (a test checks it against sysfs-docs) and mmtunectl
picks it up: profiles, validation, apply order, verify, status, metrics.

Kernel lines: every knob knows the lines that have its file (Knob.lines:
the table's column for mmtune's, set below for the kernel's own: the mTHP
sizes and zswap's shrinker_enabled are 6.12's, same_filled_pages_enabled
6.1's). On a kernel of one of these lines (uname -r), a knob of another
line is skipped with one line for all of them, never an error; on any
other kernel, an absent file is judged by its feature as before.

Per-size knobs (Knob.size, e.g. "64kB"): the kernel's mTHP files are one
section per size, [thp.hugepages-<size>kB], as its directories are; the
module's are one key per size, policy_<size>kB and store_<size>kB, as its
files are. Every key is one file: there is no second spelling of a knob.
"""

import os
import re

MMTUNE = "sys/kernel/mm/mmtune"
THP = "sys/kernel/mm/transparent_hugepage"
ZSWAP = "sys/module/zswap/parameters"
SYSCTL_VM = "proc/sys/vm"

# The size in the path of a per-size file: hugepages-64kB/enabled, policy_64kB.
SIZE_RE = re.compile(r"[-_]([0-9]+kB)(?:/|$)")

INT_MAX = 2147483647
ULONG_MAX = 18446744073709551615


class Knob(object):
    """One writable knob.

    kind:
      int     decimal integer in one of the ranges [(lo, hi), ...]
      bool01  "0"/"1" (mmtune and most sysfs booleans)
      boolYN  kernel module bool parameter: reads back "Y"/"N"
      choice  one of choices; if bracket, the file reads "a [b] c"
      str     free word matching [A-Za-z0-9_.+-]+; the kernel decides
    """

    def __init__(self, section, key, path, kind, ranges=None, choices=None,
                 bracket=False, provider="kernel", note="", feature=None, lines=None):
        self.section = section
        self.key = key
        self.name = section + "." + key
        self.path = path
        self.kind = kind
        self.ranges = ranges or []
        self.choices = choices or []
        self.bracket = bracket
        self.provider = provider
        self.note = note
        self.default = None     # mmtune knobs: the value after module load
        # The kernel feature (FEATURES) whose directory holds the file: when
        # it is absent the knob is skipped, not an error. None: always there.
        self.feature = feature
        # The other form of the same kernel setting (PAIRS), or None.
        self.pair = None
        # The kernel lines (LINES) that have the file; None: every kernel
        # that has its feature.
        self.lines = tuple(lines) if lines else None
        # The folio size of a per-size knob ("64kB"), else None.
        m = SIZE_RE.search(path)
        self.size = m.group(1) if m else None


def _sysctl(name, ranges, note=""):
    return Knob("sysctl", "vm." + name, SYSCTL_VM + "/" + name, "int",
                ranges=ranges, provider="kernel sysctl", note=note)


def _thp(section, key, path, kind, **kw):
    kw.setdefault("feature", "thp")
    return Knob(section, key, THP + "/" + path, kind, provider="kernel THP", **kw)


def _zswap(key, kind, **kw):
    return Knob("zswap", key, ZSWAP + "/" + key, kind, provider="kernel zswap",
                feature="zswap", **kw)


B01 = "bool01"
# mTHP sizes with 4 KiB pages (6.12, mm/huge_memory.c thpsize_create()):
# anonymous folios of orders 2 to PMD have hugepages-<size>kB/enabled,
# shmem folios of orders 1 to PMD hugepages-<size>kB/shmem_enabled (8kB is
# shmem only). A size this kernel lacks has no directory and its knobs are
# skipped like any absent feature; 6.1 has none of them.
MTHP_SIZES_KB = [16, 32, 64, 128, 256, 512, 1024, 2048]
SHMEM_SIZES_KB = [8] + MTHP_SIZES_KB
MTHP_LINES = ("6.12",)

# Order matters: apply writes in this order, so that global policy (sysctl,
# THP, zswap) is in place before mmtune's features are switched on; the
# mmtune knobs (from knobs.tsv) are appended below.
KNOBS = [
    _sysctl("swappiness", [(0, 200)]),
    _sysctl("watermark_scale_factor", [(1, 3000)]),
    _sysctl("watermark_boost_factor", [(0, INT_MAX)]),
    _sysctl("min_free_kbytes", [(0, INT_MAX)], note="the kernel sizes it at boot"),
    # 0 means "kernel default"; 1..7 are rejected by the kernel.
    _sysctl("percpu_pagelist_high_fraction", [(0, 0), (8, INT_MAX)]),
    _sysctl("page-cluster", [(0, 31)]),
    _sysctl("vfs_cache_pressure", [(0, INT_MAX)]),
    # Two forms of one setting each (PAIRS): the kernel keeps one, the
    # other reads 0. dirty_bytes' minimum is two pages (4 KiB pages here;
    # the kernel refuses less on larger pages).
    _sysctl("dirty_ratio", [(0, 100)]),
    _sysctl("dirty_bytes", [(8192, ULONG_MAX)]),
    _sysctl("dirty_background_ratio", [(0, 100)]),
    _sysctl("dirty_background_bytes", [(1, ULONG_MAX)]),
    _sysctl("compaction_proactiveness", [(0, 100)]),
    _sysctl("overcommit_memory", [(0, 2)]),
    _sysctl("overcommit_ratio", [(0, INT_MAX)]),
    _sysctl("zone_reclaim_mode", [(0, 7)]),

    _thp("thp", "enabled", "enabled", "choice", bracket=True,
         choices=["always", "madvise", "never"]),
    _thp("thp", "defrag", "defrag", "choice", bracket=True,
         choices=["always", "defer", "defer+madvise", "madvise", "never"]),
    _thp("thp", "shmem_enabled", "shmem_enabled", "choice", bracket=True,
         choices=["always", "within_size", "advise", "never", "deny", "force"]),
    _thp("thp", "use_zero_page", "use_zero_page", B01),
    _thp("thp.khugepaged", "defrag", "khugepaged/defrag", B01),
    _thp("thp.khugepaged", "max_ptes_none", "khugepaged/max_ptes_none", "int",
         ranges=[(0, 511)]),
    _thp("thp.khugepaged", "max_ptes_swap", "khugepaged/max_ptes_swap", "int",
         ranges=[(0, 511)]),
    _thp("thp.khugepaged", "pages_to_scan", "khugepaged/pages_to_scan", "int",
         ranges=[(1, INT_MAX)]),
    _thp("thp.khugepaged", "scan_sleep_millisecs", "khugepaged/scan_sleep_millisecs",
         "int", ranges=[(0, INT_MAX)]),
] + [
    # mTHP (6.8+): one directory per size the kernel supports; per size
    # the anonymous switch, then shmem's (inherit: the files above).
    _thp("thp.hugepages-%dkB" % size, key, "hugepages-%dkB/%s" % (size, key),
         "choice", bracket=True, choices=choices, feature="thp.hugepages-%dkB" % size,
         lines=MTHP_LINES)
    for size in SHMEM_SIZES_KB
    for key, choices in (("enabled", ["always", "inherit", "madvise", "never"]),
                         ("shmem_enabled", ["always", "inherit", "within_size", "advise",
                                            "never"]))
    if key == "shmem_enabled" or size in MTHP_SIZES_KB
] + [
    _zswap("compressor", "str", note="the kernel refuses an unknown compressor"),
    _zswap("zpool", "choice", choices=["zbud", "z3fold", "zsmalloc"]),
    _zswap("max_pool_percent", "int", ranges=[(1, 100)]),
    _zswap("accept_threshold_percent", "int", ranges=[(0, 100)]),
    # 6.12 stores zero-filled pages always (no switch), and can write cold
    # entries back to the swap device under pool pressure (6.8+).
    _zswap("same_filled_pages_enabled", "boolYN", lines=["6.1"]),
    _zswap("shrinker_enabled", "boolYN", lines=["6.12"]),
    # Last of zswap: switch it on once compressor and pool are set.
    _zswap("enabled", "boolYN"),
]


class SchemaError(Exception):
    pass


TABLE = "knobs.tsv"
COLUMNS = ["dir", "file", "type", "mode", "default", "values", "constraint", "lines"]
LINE_RE = re.compile(r"^[0-9]+\.[0-9]+$")
TYPES = ("bool", "u32", "choice", "counter", "text", "table")
CONSTRAINT_RE = re.compile(r"^(<=|>=|<|>) ([a-z0-9_]+)(?: unless ([0-9]+))?$")


class MmFile(object):
    """One row of knobs.tsv: a file under /sys/kernel/mm/mmtune/."""

    def __init__(self, row, where):
        (self.dir, self.file, self.type, self.mode, self.default, self.values,
         self.constraint, lines) = row
        self.where = where
        self.lines = lines.split()
        if not self.lines or not all(LINE_RE.match(l) for l in self.lines):
            raise SchemaError("%s: lines %r: not kernel lines such as '6.1 6.12'" % (where, lines))
        rel = self.file if self.dir == "." else self.dir + "/" + self.file
        self.path = MMTUNE + "/" + rel
        self.ranges = []
        self.choices = []
        if self.type not in TYPES:
            raise SchemaError("%s: unknown type %r (one of %s)" % (where, self.type, ", ".join(TYPES)))
        if self.mode not in ("rw", "ro"):
            raise SchemaError("%s: mode must be rw or ro, not %r" % (where, self.mode))
        if self.mode == "rw" and self.type in ("counter", "text"):
            raise SchemaError("%s: a %s file is read-only" % (where, self.type))
        if self.type == "u32":
            for part in self.values.split(","):
                m = re.match(r"^([0-9]+)(?:-([0-9]+))?$", part)
                if not m:
                    raise SchemaError("%s: values %r: not lo-hi[,lo-hi...]" % (where, self.values))
                lo = int(m.group(1))
                self.ranges.append((lo, int(m.group(2) or lo)))
        elif self.type == "choice":
            self.choices = self.values.split("|")
        elif self.type == "bool" and self.values not in ("0|1", ""):
            raise SchemaError("%s: a bool takes 0|1" % where)
        # The default on each line (a line's row may differ: abi_version).
        self.defaults = dict((l, self.default) for l in self.lines)
        self.relation = None
        if self.constraint:
            m = CONSTRAINT_RE.match(self.constraint)
            if not m:
                raise SchemaError("%s: constraint %r: not 'OP FILE [unless N]'" % (where, self.constraint))
            self.relation = (m.group(1), m.group(2),
                             None if m.group(3) is None else m.group(3))


def table_path():
    """knobs.tsv: installed next to this package, or sysfs-docs/ in the tree."""
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(here, TABLE), os.path.join(here, "..", "..", "sysfs-docs", TABLE)):
        if os.path.isfile(p):
            return os.path.normpath(p)
    raise SchemaError("%s not found next to %s nor in sysfs-docs/" % (TABLE, here))


def read_table(path=None):
    path = path or table_path()
    rows = []
    with open(path) as f:
        lines = f.read().splitlines()
    if not lines or lines[0].split("\t") != COLUMNS:
        raise SchemaError("%s:1: header must be %s" % (path, "<TAB>".join(COLUMNS)))
    seen = {}
    for n, line in enumerate(lines[1:], 2):
        if not line.strip() or line.startswith("#"):
            continue
        cols = line.split("\t")
        if len(cols) != len(COLUMNS):
            raise SchemaError("%s:%d: %d columns, expected %d" % (path, n, len(cols), len(COLUMNS)))
        row = MmFile(cols, "%s:%d" % (path, n))
        first = seen.get((row.dir, row.file))
        if first is None:
            seen[(row.dir, row.file)] = row
            rows.append(row)
            continue
        # Another line's row of the same file: one row per file here, with
        # every line; only a read-only file's default may differ.
        same = lambda r: (r.type, r.mode, r.values, r.constraint)
        if set(first.lines) & set(row.lines) or row.mode != "ro" or same(row) != same(first):
            raise SchemaError("%s:%d: %s/%s listed twice" % (path, n, row.dir, row.file))
        first.lines += row.lines
        first.defaults[row.lines[0]] = row.default
    return rows


def read_line_rows(path=None):
    """{line: [row columns]}: the table as each kernel line's module has it."""
    path = path or table_path()
    out = {}
    with open(path) as f:
        lines = f.read().splitlines()
    for line in lines[1:]:
        if line.strip() and not line.startswith("#"):
            cols = line.split("\t")
            for l in cols[-1].split():
                out.setdefault(l, []).append(cols[:-1])
    return out


# A broken or missing table is a broken installation: every command says
# so (cli.main, exit 7), none runs on a half-known set of knobs.
try:
    MM_FILES, TABLE_ERROR = read_table(), None
except SchemaError as e:
    MM_FILES, TABLE_ERROR = [], str(e)
except (OSError, UnicodeDecodeError) as e:
    MM_FILES, TABLE_ERROR = [], "%s: %s" % (getattr(e, "filename", None) or TABLE, e)
# The kernel lines mmtune has a series and a table column for.
LINES = sorted(set(l for f in MM_FILES for l in f.lines),
               key=lambda l: tuple(int(x) for x in l.split(".")))
MM_DIRS = []
# The kernel lines each directory exists on: those of its files.
DIR_LINES = {}
for _f in MM_FILES:
    if _f.dir != "." and _f.dir not in MM_DIRS:
        MM_DIRS.append(_f.dir)
    DIR_LINES.setdefault(_f.dir, set()).update(_f.lines)


def _line_only(f):
    """A file that some lines of its directory lack (a 6.12 per-size knob)."""
    return set(f.lines) != DIR_LINES[f.dir]

_KIND = {"bool": B01, "u32": "int", "choice": "choice"}


def _mm_knobs():
    """The rw files, per directory in table order, except that the switches
    come last: choice files (policy, mode: their non-stock words turn the
    hook on), then "enabled". A feature is switched on once it is set up."""
    out = []
    for d in MM_DIRS:
        # A table (cgroup_policy/entries) is set by its own profile sections.
        rw = [f for f in MM_FILES if f.dir == d and f.mode == "rw" and f.type in _KIND]
        rw.sort(key=lambda f: (f.file == "enabled", f.type == "choice"))
        for f in rw:
            # Choice files show every choice, the current one in brackets.
            k = Knob("mmtune." + d, f.file, f.path, _KIND[f.type], ranges=f.ranges,
                     choices=f.choices, bracket=f.type == "choice",
                     provider="mmtune.ko feature group " + d,
                     feature="mmtune.%s.%s" % (d, f.file) if _line_only(f) else "mmtune." + d,
                     lines=f.lines)
            k.default = f.default
            k.relation_text = f.constraint
            out.append(k)
    return out


KNOBS += _mm_knobs()

BY_NAME = dict((k.name, k) for k in KNOBS)

# Kernel features: a knob whose feature directory is absent is skipped with
# one line per feature (a profile applies on every kernel it meets); a knob
# missing while its feature is there is an error unless marked optional.
# name: (directory, parent feature, what provides it)
FEATURES = {
    "thp": (THP, None, "CONFIG_TRANSPARENT_HUGEPAGE"),
    "zswap": ("sys/module/zswap", None, "CONFIG_ZSWAP"),
    "mmtune": (MMTUNE, None, "mmtune.ko (loaded, built for this kernel's hook ABI)"),
}
for _s in SHMEM_SIZES_KB:
    FEATURES["thp.hugepages-%dkB" % _s] = (
        THP + "/hugepages-%dkB" % _s, "thp", "mTHP size %d kB (kernel 6.8+ with this size)" % _s)
for _d in MM_DIRS:
    FEATURES["mmtune." + _d] = (MMTUNE + "/" + _d, "mmtune",
                                "mmtune.ko with feature group %s (an older module lacks it)" % _d)
# A file of one kernel line only: absent elsewhere, like a feature.
for _f in MM_FILES:
    if _f.dir != "." and _line_only(_f):
        FEATURES["mmtune.%s.%s" % (_f.dir, _f.file)] = (
            _f.path, "mmtune." + _f.dir,
            "mmtune.ko on kernel line %s" % " or ".join(_f.lines))

# Every file of the kernel's own: kernels add and remove them (zswap's zpool
# parameter is gone in 6.18), so one absent while its directory is there is
# skipped like an absent feature, never an error. Not mmtune.ko's: a file
# missing from a loaded module is a module of another version (an error).
ABSENT_NEEDS = {"zswap.zpool": "a kernel before 6.18 (later ones have no zpool parameter: "
                               "zsmalloc only)"}
for _k in KNOBS:
    if not _k.name.startswith("mmtune.") and _k.name not in FEATURES:
        FEATURES[_k.name] = (_k.path, _k.feature, ABSENT_NEEDS.get(
            _k.name, "a kernel with this file (%s)" % _k.provider))

# One kernel setting in two forms: writing one makes the kernel zero the
# other (dirty_ratio_handler() and friends, mm/page-writeback.c), so the
# pair is saved, applied, verified and restored as one setting: the form in
# use is the one reading non-zero (the first when both read 0).
PAIRS = [("sysctl.vm.dirty_ratio", "sysctl.vm.dirty_bytes"),
         ("sysctl.vm.dirty_background_ratio", "sysctl.vm.dirty_background_bytes")]
PAIRS_OF = {}
for _a, _b in PAIRS:
    BY_NAME[_a].pair, BY_NAME[_b].pair = _b, _a
    PAIRS_OF[_a] = PAIRS_OF[_b] = (_a, _b)
SECTIONS = []
for _k in KNOBS:
    if _k.section not in SECTIONS:
        SECTIONS.append(_k.section)

# Pairs the kernel checks against each other: (a, op, b, unless) must hold
# when a profile sets both (a == unless is always accepted). The kernel
# checks them against the live value of the other knob, so apply retries a
# refused knob once after the others.
RELATIONS = [("mmtune.%s.%s" % (f.dir, f.file), f.relation[0],
              "mmtune.%s.%s" % (f.dir, f.relation[1]), f.relation[2])
             for f in MM_FILES if f.relation]

# Read-only files: the module's identity ("." text files) and counters.
MMTUNE_INFO = [f.file for f in MM_FILES if f.dir == "." and f.file != "features"]
COUNTERS = dict((d, [f.file for f in MM_FILES if f.dir == d and f.type == "counter"])
                for d in MM_DIRS)
GAUGES = dict((d, [f.file for f in MM_FILES if f.dir == d and f.mode == "ro" and f.type == "bool"])
              for d in MM_DIRS)


def holds(op, a, b, unless=None):
    """The relation a OP b on integers (a == unless always holds)."""
    if unless is not None and a == int(unless):
        return True
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
