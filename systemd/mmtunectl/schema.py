"""Every knob mmtunectl knows: one table, the only place to add a knob.

A profile key is valid exactly when it is listed here. Each entry gives the
section and key used in profiles, the live path (relative to the root), the
value type and what provides the file, so that a knob missing on this kernel
can be explained. Adding a feature's knobs later means adding rows below.
"""

MMTUNE = "sys/kernel/mm/mmtune"
THP = "sys/kernel/mm/transparent_hugepage"
ZSWAP = "sys/module/zswap/parameters"
SYSCTL_VM = "proc/sys/vm"

INT_MAX = 2147483647


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
                 bracket=False, provider="kernel", note=""):
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


def _sysctl(name, ranges, note=""):
    return Knob("sysctl", "vm." + name, SYSCTL_VM + "/" + name, "int",
                ranges=ranges, provider="kernel sysctl", note=note)


def _mm(group, key, kind, **kw):
    return Knob("mmtune." + group, key, MMTUNE + "/" + group + "/" + key, kind,
                provider="mmtune.ko feature group " + group, **kw)


B01 = "bool01"

# Order matters: apply writes in this order, so that global policy (sysctl,
# THP, zswap) is in place before mmtune's features are switched on.
KNOBS = [
    _sysctl("swappiness", [(0, 200)]),
    _sysctl("watermark_scale_factor", [(1, 3000)]),
    _sysctl("watermark_boost_factor", [(0, INT_MAX)]),
    _sysctl("min_free_kbytes", [(0, INT_MAX)], note="the kernel sizes it at boot"),
    # 0 means "kernel default"; 1..7 are rejected by the kernel.
    _sysctl("percpu_pagelist_high_fraction", [(0, 0), (8, INT_MAX)]),
    _sysctl("page-cluster", [(0, 31)]),
    _sysctl("vfs_cache_pressure", [(0, INT_MAX)]),
    _sysctl("dirty_ratio", [(0, 100)]),
    _sysctl("dirty_background_ratio", [(0, 100)]),
    _sysctl("compaction_proactiveness", [(0, 100)]),
    _sysctl("overcommit_memory", [(0, 2)]),
    _sysctl("overcommit_ratio", [(0, INT_MAX)]),
    _sysctl("zone_reclaim_mode", [(0, 7)]),

    Knob("thp", "enabled", THP + "/enabled", "choice", bracket=True,
         choices=["always", "madvise", "never"], provider="kernel THP"),
    Knob("thp", "defrag", THP + "/defrag", "choice", bracket=True,
         choices=["always", "defer", "defer+madvise", "madvise", "never"],
         provider="kernel THP"),
    Knob("thp", "shmem_enabled", THP + "/shmem_enabled", "choice", bracket=True,
         choices=["always", "within_size", "advise", "never", "deny", "force"],
         provider="kernel THP"),
    Knob("thp", "use_zero_page", THP + "/use_zero_page", B01, provider="kernel THP"),
    Knob("thp.khugepaged", "defrag", THP + "/khugepaged/defrag", B01,
         provider="kernel THP"),
    Knob("thp.khugepaged", "max_ptes_none", THP + "/khugepaged/max_ptes_none",
         "int", ranges=[(0, 511)], provider="kernel THP"),
    Knob("thp.khugepaged", "max_ptes_swap", THP + "/khugepaged/max_ptes_swap",
         "int", ranges=[(0, 511)], provider="kernel THP"),
    Knob("thp.khugepaged", "pages_to_scan", THP + "/khugepaged/pages_to_scan",
         "int", ranges=[(1, INT_MAX)], provider="kernel THP"),
    Knob("thp.khugepaged", "scan_sleep_millisecs",
         THP + "/khugepaged/scan_sleep_millisecs", "int", ranges=[(0, INT_MAX)],
         provider="kernel THP"),

    Knob("zswap", "compressor", ZSWAP + "/compressor", "str",
         provider="kernel zswap", note="the kernel refuses an unknown compressor"),
    Knob("zswap", "zpool", ZSWAP + "/zpool", "choice",
         choices=["zbud", "z3fold", "zsmalloc"], provider="kernel zswap"),
    Knob("zswap", "max_pool_percent", ZSWAP + "/max_pool_percent", "int",
         ranges=[(1, 100)], provider="kernel zswap"),
    Knob("zswap", "accept_threshold_percent", ZSWAP + "/accept_threshold_percent",
         "int", ranges=[(0, 100)], provider="kernel zswap"),
    Knob("zswap", "same_filled_pages_enabled",
         ZSWAP + "/same_filled_pages_enabled", "boolYN", provider="kernel zswap"),
    # Last of zswap: switch it on once compressor and pool are set.
    Knob("zswap", "enabled", ZSWAP + "/enabled", "boolYN", provider="kernel zswap"),

    _mm("zswap", "backoff_ms", "int", ranges=[(0, 600000)]),
    _mm("zswap", "enabled", B01),
    _mm("swap_slots", "cache_size", "int", ranges=[(16, 1024)]),
    _mm("swap_slots", "activate_factor", "int", ranges=[(1, 64)]),
    _mm("swap_slots", "deactivate_factor", "int", ranges=[(0, 63)]),
    _mm("swap_slots", "enabled", B01),
    _mm("thp_swap", "sample_size", "int", ranges=[(1, 512)]),
    _mm("thp_swap", "threshold", "int", ranges=[(0, 512)]),
    _mm("thp_swap", "policy", "choice", choices=["whole", "split", "adaptive"]),
    _mm("split_zero", "mode", "choice", choices=["never", "reclaim-only", "always"]),
    _mm("pcp", "high_max_fraction", "int", ranges=[(8, 10000)]),
    _mm("pcp", "decay_percent", "int", ranges=[(1, 100)]),
    _mm("pcp", "enabled", B01),
]

BY_NAME = dict((k.name, k) for k in KNOBS)
SECTIONS = []
for _k in KNOBS:
    if _k.section not in SECTIONS:
        SECTIONS.append(_k.section)

# Pairs the kernel checks against each other: (a, op, b) must hold when a
# profile sets both. The kernel checks them against the live value of the
# other knob, so apply retries a refused knob once after the others.
RELATIONS = [
    ("mmtune.swap_slots.deactivate_factor", "<", "mmtune.swap_slots.activate_factor"),
    ("mmtune.thp_swap.threshold", "<=", "mmtune.thp_swap.sample_size"),
]

# Read-only files shown by status: mmtune's identity and counters.
MMTUNE_INFO = ["version", "abi_version"]
COUNTERS = {
    "zswap": ["thp_stored", "subpages_stored", "subpages_rolled_back",
              "rollback_pool_limit", "rollback_cgroup_limit", "rollback_nomem",
              "rollback_compress", "rollback_other", "backoff_skipped",
              "fallback_disk"],
    "swap_slots": ["active", "alloc", "alloc_hit", "alloc_direct", "refill",
                   "refill_slots", "free", "free_cached", "flush", "flush_slots",
                   "drains", "activations", "deactivations"],
    "thp_swap": ["thp_whole", "thp_split", "subpages_sampled",
                 "subpages_sampled_zero"],
    "split_zero": ["splits_scanned", "subpages_scanned", "subpages_zero",
                   "zero_ptes_mapped", "subpages_dropped", "bytes_not_written"],
}
