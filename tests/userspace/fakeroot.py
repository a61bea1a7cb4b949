"""A fake root for mmtunectl: /sys, /proc, /etc, /run, /usr/lib/mmtune.

Live files hold what a stock 6.1 kernel shows (THP files with brackets,
zswap booleans as Y/N), so that parsing of real formats is exercised;
make(root, line="6.12") makes a 6.12 kernel with our series instead: the
mTHP directories hugepages-<size>kB with their switches and stats (zswpout
included, from the series' 0002), zswap without same_filled_pages_enabled
and with shrinker_enabled, and the module's 6.12 files (knobs.tsv's rows
of that line; the groups 6.12 does not offer are not-offered).
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


def table(line=LINE):
    """[{column: value}] of knobs.tsv on line (every line: None), read here
    without mmtunectl's code."""
    with open(TABLE) as f:
        lines = f.read().splitlines()
    cols = lines[0].split("\t")
    rows = [dict(zip(cols, l.split("\t"))) for l in lines[1:]
            if l.strip() and not l.startswith("#")]
    return [r for r in rows if line is None or line in r["lines"].split()]


def feature_dirs(line=None):
    """The table's feature directories in its order, which is the kernel's
    order of the feature groups (test_table.py checks it), so that of the
    features file; those of one line when given."""
    out = []
    for r in table(line):
        if r["dir"] != "." and r["dir"] not in out:
            out.append(r["dir"])
    return out


def features_text(state, line=LINE):
    """The features file: one line per group of the hook table, state[group],
    else "off", or "not-offered" for a group the line has no hooks for."""
    offered = feature_dirs(line)
    return "\n".join("%s %s" % (d, state.get(d, "off" if d in offered else "not-offered"))
                     for d in feature_dirs())


# Text files whose value is not the table's default (abi_version is).
TEXT = {"version": "0.1.0",
        "features": features_text({}),
        "cached": "cpu0 0 0\ncpu1 0 0",
        "zones": "0 DMA32 high 4 4 4 count 0 0 0 bounds 4 4"}


def mmtune_files(dirs, line=LINE):
    """{rel: default text} for the root files and the feature dirs given."""
    out = {}
    for r in table(line):
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


def add_all_features(root, line=LINE):
    """Every feature directory of the table on line, at its defaults."""
    for rel, text in mmtune_files([r["dir"] for r in table(line)], line).items():
        write(root, rel, text)
    if line != LINE:
        write(root, "sys/kernel/mm/mmtune/features", features_text({}, line))


# 6.12 (Debian's 6.12.117 with the series): what differs from STOCK.
THP = "sys/kernel/mm/transparent_hugepage/"
STOCK_612 = {
    "proc/sys/kernel/osrelease": "6.12.117-mmtune",
    THP + "hpage_pmd_size": "2097152",
    THP + "shrink_underused": "1",
    "sys/module/zswap/parameters/zpool": "zsmalloc",
    "sys/module/zswap/parameters/shrinker_enabled": "N",
}
GONE_612 = ["sys/module/zswap/parameters/same_filled_pages_enabled"]
# mm/huge_memory.c thpsize_create(): every size has these stats (any_stats,
# with CONFIG_SHMEM), zswpout from the series' 0002; anonymous sizes (16kB
# and up) the anon_* ones, shmem sizes (all) the shmem_* ones.
ANY_STATS = ["zswpout", "swpout", "swpout_fallback", "split", "split_failed"]
ANON_STATS = ["anon_fault_alloc", "anon_fault_fallback", "anon_fault_fallback_charge",
              "split_deferred", "nr_anon", "nr_anon_partially_mapped"]
SHMEM_STATS = ["shmem_alloc", "shmem_fallback", "shmem_fallback_charge"]


def mthp_files():
    """{rel: text} of the hugepages-<size>kB directories at 6.12's defaults:
    2048kB inherits the top-level setting, every other size is never."""
    out = {}
    for kb in (8, 16, 32, 64, 128, 256, 512, 1024, 2048):
        d = THP + "hugepages-%dkB/" % kb
        pmd = kb == 2048
        if kb >= 16:
            out[d + "enabled"] = ("always [inherit] madvise never" if pmd
                                  else "always inherit madvise [never]")
        out[d + "shmem_enabled"] = ("always [inherit] within_size advise never" if pmd
                                    else "always inherit within_size advise [never]")
        for n in ANY_STATS + SHMEM_STATS + (ANON_STATS if kb >= 16 else []):
            out[d + "stats/" + n] = "0"
    return out


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + ("\n" if text and not text.endswith("\n") else ""))


def read(root, rel):
    with open(os.path.join(root, rel)) as f:
        return f.read().strip()


def make(root, module=True, vendor=True, line=LINE):
    """The fake root of a kernel of line (6.1 or 6.12). The 6.1 module is
    the one of the first issues (zswap_large only, two counters set); the
    6.12 one has every group the line offers, at its defaults."""
    for rel, text in STOCK.items():
        write(root, rel, text)
    if line == "6.12":
        for rel in GONE_612:
            os.unlink(os.path.join(root, rel))
        for rel, text in list(STOCK_612.items()) + list(mthp_files().items()):
            write(root, rel, text)
        if module:
            add_all_features(root, line)
            write(root, "sys/kernel/mm/mmtune/version", TEXT["version"])
    elif module:
        for rel, text in MMTUNE.items():
            write(root, rel, text)
    os.makedirs(os.path.join(root, "etc/mmtune"), exist_ok=True)
    os.makedirs(os.path.join(root, "run"), exist_ok=True)
    if vendor:
        dst = os.path.join(root, "usr/lib/mmtune")
        shutil.copytree(os.path.join(SYSTEMD, "profiles"), os.path.join(dst, "profiles"))
        shutil.copy(os.path.join(SYSTEMD, "recommend.rules"), dst)
    return root


# Kernels mmtune meets without its series: {model: (line of the fake root
# to start from, uname -r, files removed, files added)}. None has
# mmtune.ko nor the hooks (no mmtune_register in kallsyms).
ZSWAP = "sys/module/zswap"
KERNELS = {
    # Debian 12's linux-image-cloud-amd64: CONFIG_ZSWAP is not set.
    "debian12-cloud": ("6.1", "6.1.0-28-cloud-amd64", [ZSWAP], {}),
    # Debian 13's linux-image-cloud-amd64: the 6.12 mTHP sizes, no zswap.
    "debian13-cloud": ("6.12", "6.12.48+deb13-cloud-amd64", [ZSWAP], {}),
    # 6.18 and later (7.3 of trixie-backports): zswap without its zpool
    # parameter (zsmalloc only, since 6.18).
    "7.3": ("6.12", "7.3.0-1-amd64", [ZSWAP + "/parameters/zpool"],
            {ZSWAP + "/parameters/compressor": "zstd"}),
}


def make_kernel(root, model):
    """The fake root of a distribution kernel of KERNELS."""
    line, release, gone, added = KERNELS[model]
    make(root, module=False, line=line)
    for rel in gone:
        path = os.path.join(root, rel)
        shutil.rmtree(path) if os.path.isdir(path) else os.unlink(path)
    for rel, text in list(added.items()) + [("proc/sys/kernel/osrelease", release),
                                            ("proc/kallsyms", "0000000000000000 T _stext\n")]:
        write(root, rel, text)
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
    if rel == CG_POLICY + "/entries":
        return cgroup_policy_write(self.root, value)
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


# --- cgroup_policy: the module's per-cgroup table (its sysfs ABI) -----------
CG_POLICY = "sys/kernel/mm/mmtune/cgroup_policy"
CG_ROOT = "sys/fs/cgroup"
CG_SIZES = {"6.1": ["2048kB"],
            "6.12": ["8kB", "16kB", "32kB", "64kB", "128kB", "256kB", "512kB", "1024kB",
                     "2048kB"]}
# kubelet's cgroup layout with the systemd driver, a pod and a container,
# and a few system units.
KUBE_TREE = ["kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-poda1.slice/"
             "cri-containerd-c1.scope",
             "kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-podb2.slice",
             "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podc3.slice",
             "kubepods.slice/kubepods-podd4.slice",
             "system.slice/containerd.service", "system.slice/postgresql.service",
             "user.slice/user-1000.slice/session-3.scope"]


def cgroup_policy(root, line=LINE, tree=KUBE_TREE, max_entries=1024, entries=""):
    """The module's cgroup_policy directory and a cgroup2 tree of dirs."""
    for d in tree:
        os.makedirs(os.path.join(root, CG_ROOT, d), exist_ok=True)
    for name, text in (("enabled", "0"), ("max_entries", str(max_entries)),
                       ("nr_entries", "0"), ("sizes", " ".join(CG_SIZES[line])),
                       ("entries", ""), ("stats", "")):
        write(root, CG_POLICY + "/" + name, text)
    if entries:
        cgroup_policy_write(root, entries)


def _cg_table(root):
    out = {}
    for line in read(root, CG_POLICY + "/entries").splitlines():
        parts = line.split()
        out[parts[0]] = parts[1:]
    return out


def cgroup_policy_write(root, value):
    """One write(2) to entries, with the ABI's semantics: replace or
    create (<path> key=value...), remove (-<path>); EINVAL, ENOENT, ENOSPC
    change nothing. Shorthands are expanded; entries read back sorted."""
    sizes = read(root, CG_POLICY + "/sizes").split()
    osizes = [s for s in sizes if s != "8kB"]
    table = _cg_table(root)
    words = value.strip("\n").split(" ")
    bad = OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    if not words or not words[0] or len(words[0]) > 4096:
        raise bad
    if words[0].startswith("-"):
        if len(words) != 1 or words[0][1:] not in table:
            raise OSError(errno.ENOENT, os.strerror(errno.ENOENT))
        del table[words[0][1:]]
    else:
        path = words[0]
        if not path.startswith("/") or not os.path.isdir(os.path.join(root, CG_ROOT) + path) \
                or len(words) < 2:
            raise bad
        keys, seen = {}, set()
        for w in words[1:]:
            k, sep, v = w.partition("=")
            if not sep or k in seen:
                raise bad
            seen.add(k)
            m = re.match(r"^(thp_swap|zswap_large)(?:_([0-9]+kB))?$", k)
            if k == "orders":
                if v not in ("none", "all") and not all(s in osizes for s in v.split(",")):
                    raise bad
                if v != "all":
                    keys["orders"] = v if v == "none" else ",".join(
                        s for s in osizes if s in v.split(","))
            elif m:
                own = osizes if m.group(1) == "thp_swap" else sizes
                vals = ("inherit", "whole", "split", "adaptive") if m.group(1) == "thp_swap" \
                    else ("0", "1")
                if v not in vals or m.group(2) and m.group(2) not in own:
                    raise bad
                for s in [m.group(2)] if m.group(2) else own:
                    keys["%s_%s" % (m.group(1), s)] = v
            else:
                raise bad
        if path not in table and len(table) >= int(read(root, CG_POLICY + "/max_entries")):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        order = ["orders"] + ["%s_%s" % (b, s) for b in ("thp_swap", "zswap_large")
                              for s in sizes]
        table[path] = ["%s=%s" % (k, keys[k]) for k in order
                       if k in keys and keys[k] != "inherit"]
    write(root, CG_POLICY + "/entries", "\n".join(
        " ".join([p] + table[p]) for p in sorted(table)))
    write(root, CG_POLICY + "/nr_entries", str(len(table)))
