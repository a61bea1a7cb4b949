"""A fake root for mmtunectl: /sys, /proc, /etc, /run, /usr/lib/mmtune.

Live files hold what a stock 6.1 kernel shows (THP files with brackets,
zswap booleans as Y/N), so that parsing of real formats is exercised.
"""

import errno
import os
import re
import shutil

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SYSTEMD = os.path.join(REPO, "systemd")

STOCK = {
    "proc/sys/vm/swappiness": "60",
    "proc/sys/vm/watermark_scale_factor": "10",
    "proc/sys/vm/watermark_boost_factor": "15000",
    "proc/sys/vm/min_free_kbytes": "67584",
    "proc/sys/vm/percpu_pagelist_high_fraction": "0",
    "proc/sys/vm/page-cluster": "3",
    "proc/sys/vm/vfs_cache_pressure": "100",
    "proc/sys/vm/dirty_ratio": "20",
    "proc/sys/vm/dirty_bytes": "0",
    "proc/sys/vm/dirty_background_ratio": "10",
    "proc/sys/vm/dirty_background_bytes": "0",
    "proc/sys/vm/compaction_proactiveness": "20",
    "proc/sys/vm/overcommit_memory": "0",
    "proc/sys/vm/overcommit_ratio": "50",
    "proc/sys/vm/zone_reclaim_mode": "0",
    "sys/kernel/mm/transparent_hugepage/enabled": "always [madvise] never",
    "sys/kernel/mm/transparent_hugepage/defrag": "always defer defer+madvise [madvise] never",
    "sys/kernel/mm/transparent_hugepage/shmem_enabled": "always within_size advise [never] deny force",
    "sys/kernel/mm/transparent_hugepage/use_zero_page": "1",
    "sys/kernel/mm/transparent_hugepage/khugepaged/defrag": "1",
    "sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_none": "511",
    "sys/kernel/mm/transparent_hugepage/khugepaged/max_ptes_swap": "64",
    "sys/kernel/mm/transparent_hugepage/khugepaged/pages_to_scan": "4096",
    "sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs": "10000",
    "sys/module/zswap/parameters/enabled": "N",
    "sys/module/zswap/parameters/compressor": "lzo",
    "sys/module/zswap/parameters/zpool": "zbud",
    "sys/module/zswap/parameters/max_pool_percent": "20",
    "sys/module/zswap/parameters/accept_threshold_percent": "90",
    "sys/module/zswap/parameters/same_filled_pages_enabled": "Y",
    "proc/cmdline": "BOOT_IMAGE=/vmlinuz root=/dev/vda1 ro quiet",
    "proc/meminfo": "MemTotal:        2029876 kB\nMemFree:         1800000 kB\n",
    "sys/devices/system/cpu/online": "0-1",
    "sys/class/dmi/id/chassis_type": "1",
    "proc/sys/kernel/osrelease": "6.1.0-mmtune",
    # CONFIG_MMTUNE_HOOKS: the exported symbol of the hook core.
    "proc/kallsyms": "0000000000000000 T _stext\n0000000000000000 T mmtune_register\n",
}

# Files of a loaded mmtune.ko, from the one table of its sysfs files
# (sysfs-docs/knobs.tsv), at their defaults.
TABLE = os.path.join(REPO, "sysfs-docs", "knobs.tsv")


# The kernel line of the fake root (proc/sys/kernel/osrelease below).
LINE = "6.1"


def table():
    """[{column: value}] of knobs.tsv on LINE, read here without mmtunectl's
    code."""
    with open(TABLE) as f:
        lines = f.read().splitlines()
    cols = lines[0].split("\t")
    rows = [dict(zip(cols, l.split("\t"))) for l in lines[1:]
            if l.strip() and not l.startswith("#")]
    return [r for r in rows if LINE in r["lines"].split()]


def feature_dirs():
    """The table's feature directories in its order, which is the kernel's
    order of the feature groups (test_table.py checks it), so that of the
    features file."""
    out = []
    for r in table():
        if r["dir"] != "." and r["dir"] not in out:
            out.append(r["dir"])
    return out


def features_text(state):
    """The features file: one line per group, state[group] or "off"."""
    return "\n".join("%s %s" % (d, state.get(d, "off")) for d in feature_dirs())


# Text files whose value is not the table's default (abi_version is).
TEXT = {"version": "0.1.0",
        "features": features_text({}),
        "cached": "cpu0 0 0\ncpu1 0 0",
        "zones": "0 DMA32 high 4 4 4 count 0 0 0 bounds 4 4"}


def mmtune_files(dirs):
    """{rel: default text} for the root files and the feature dirs given."""
    out = {}
    for r in table():
        if r["dir"] != "." and r["dir"] not in dirs:
            continue
        rel = "sys/kernel/mm/mmtune/" + (r["file"] if r["dir"] == "." else r["dir"] + "/" + r["file"])
        if r["type"] == "text":
            out[rel] = TEXT.get(r["file"], r["default"])
        elif r["type"] == "choice":
            # As the module shows it: every choice, the current one in brackets.
            out[rel] = " ".join("[%s]" % c if c == r["default"] else c
                                for c in r["values"].split("|"))
        else:
            out[rel] = r["default"]
    return out


# The module as the first issues had it: the root files and the zswap_large
# group, with two counters that moved.
MMTUNE = mmtune_files(["zswap_large"])
MMTUNE["sys/kernel/mm/mmtune/features"] = features_text(
    dict((d, "off" if d == "zswap_large" else "unavailable") for d in feature_dirs()))
MMTUNE["sys/kernel/mm/mmtune/zswap_large/thp_stored"] = "12"
MMTUNE["sys/kernel/mm/mmtune/zswap_large/fallback_disk"] = "3"


def add_all_features(root):
    """Every feature directory of the table, at its defaults."""
    for rel, text in mmtune_files([r["dir"] for r in table()]).items():
        write(root, rel, text)


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + ("\n" if text and not text.endswith("\n") else ""))


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read().strip()


def make(root, module=True, vendor=True):
    for rel, text in STOCK.items():
        write(root, rel, text)
    if module:
        for rel, text in MMTUNE.items():
            write(root, rel, text)
    os.makedirs(os.path.join(root, "etc/mmtune"), exist_ok=True)
    os.makedirs(os.path.join(root, "run"), exist_ok=True)
    if vendor:
        dst = os.path.join(root, "usr/lib/mmtune")
        shutil.copytree(os.path.join(SYSTEMD, "profiles"), os.path.join(dst, "profiles"))
        shutil.copy(os.path.join(SYSTEMD, "recommend.rules"), dst)
    return root


def enable_tuned(root, active):
    """tuned installed, enabled (systemctl enable tuned) and its active profile."""
    write(root, "usr/sbin/tuned", "")
    write(root, "etc/tuned/active_profile", active + "\n")
    wants = os.path.join(root, "etc/systemd/system/multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    if not os.path.lexists(os.path.join(wants, "tuned.service")):
        os.symlink("/lib/systemd/system/tuned.service", os.path.join(wants, "tuned.service"))


def snapshot(root):
    """Every live knob file: {rel: content}."""
    out = {}
    for top in ("proc/sys", "sys"):
        for d, _, files in os.walk(os.path.join(root, top)):
            for f in files:
                p = os.path.join(d, f)
                with open(p) as fh:
                    # The kernel ignores a trailing newline; so do we.
                    out[os.path.relpath(p, root)] = fh.read().strip()
    return out


VM = "proc/sys/vm/"
# {file: (the other form, the least value accepted, zeroes the other only
# when the value changes)}
DIRTY = {VM + "dirty_ratio": (VM + "dirty_bytes", 0, True),
         VM + "dirty_bytes": (VM + "dirty_ratio", 8192, True),
         VM + "dirty_background_ratio": (VM + "dirty_background_bytes", 0, False),
         VM + "dirty_background_bytes": (VM + "dirty_background_ratio", 1, False)}


def kernel_write(self, rel, value):
    """Context.write_raw against the fake tree, behaving like the kernel for
    "a [b] c" selector files: the chosen word gets the brackets, an unknown
    word is refused with EINVAL and changes nothing."""
    path = self.path(rel)
    with open(path) as f:
        old = f.read().strip()
    if rel in DIRTY:
        # mm/page-writeback.c: each form's handler zeroes the other one
        # (dirty_ratio/dirty_bytes only when the value changed); the bytes
        # forms refuse values below their minimum, so never take 0.
        other, minimum, only_on_change = DIRTY[rel]
        if not value.strip().isdigit() or int(value) < minimum:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        if not only_on_change or int(value) != int(old):
            with open(self.path(other), "w") as f:
                f.write("0\n")
    if re.search(r"\[[^\]]*\]", old):
        words = old.replace("[", "").replace("]", "").split()
        if value not in words:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
        value = " ".join("[%s]" % w if w == value else w for w in words)
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def failing_writer(fail_path, err=errno.EINVAL):
    """A Context.write_raw that raises OSError(err) for the file fail_path
    (relative to the root) and writes every other file: a kernel refusing
    one write, for monkeypatch.setattr(Context, "write_raw", ...)."""
    from mmtunectl.context import Context
    real = Context.write_raw

    def write(self, rel, value):
        if rel == fail_path:
            raise OSError(err, os.strerror(err))
        real(self, rel, value)
    return write
