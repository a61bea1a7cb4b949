"""Per-cgroup large-folio policy: the [cgroup:TARGET] sections of a profile.

TARGET names cgroups of the cgroup2 tree (/sys/fs/cgroup):
  - a path from the cgroup2 root, as /proc/self/cgroup shows it
    ("/kubepods.slice/kubepods-besteffort.slice"), shell globs allowed;
  - a systemd unit name: a slice is placed by systemd's rule
    (a-b-c.slice is /a.slice/a-b.slice/a-b-c.slice, -.slice is /); a
    service or scope, or a name with a glob, is looked up by name anywhere
    in the tree.
A glob matches the cgroups that exist when the profile is applied; a pod
created later is covered by the entry of its parent (the module's lookup
takes the nearest ancestor with an entry), not by the glob.

Each matched cgroup gets one line of the module's table
(/sys/kernel/mm/mmtune/cgroup_policy/entries), written whole: the keys a
section leaves unset follow the host's global setting. The shorthands
thp_swap= and zswap_large= are expanded here to the sizes this kernel has,
a per-size key winning over its shorthand, so that the line written is
the line the kernel reads back. apply switches cgroup_policy/enabled on.

A section whose target matches no cgroup is an error (nothing applied),
or, marked optional ("[?cgroup:...]"), skipped with one line. A kernel
without the cgroup_policy directory (no hooks, an older module) skips every
section with one line, like any absent feature.

The state file keeps, under "cgroups", cgroup_policy/enabled and each
written cgroup's entry as it was before mmtune first wrote it (null: none),
for rollback and for the next apply, which puts back the entries the new
profile no longer names.
"""

import collections
import difflib
import fnmatch
import glob
import os
import re

from . import schema

POLICY = schema.MMTUNE + "/cgroup_policy"
ENTRIES = POLICY + "/entries"
ENABLED = POLICY + "/enabled"
ENABLED_KNOB = "mmtune.cgroup_policy.enabled"
CGROOT = "sys/fs/cgroup"
PREFIX = "cgroup:"
NEEDS = "a kernel with the mmtune cgroup hooks and mmtune.ko with feature group cgroup_policy"

# Every size of either kernel line (the module's `sizes` file); a profile is
# checked against all of them, apply against the running kernel's.
SIZES = ["8kB", "16kB", "32kB", "64kB", "128kB", "256kB", "512kB", "1024kB", "2048kB"]
POLICIES = ("inherit", "whole", "split", "adaptive")
UNIT_RE = re.compile(r"^[A-Za-z0-9:_.\\@*?\[\]-]+\.(slice|service|scope)$")
PATH_RE = re.compile(r"^/[A-Za-z0-9:_.\\@*?\[\]/-]*$")
GLOB = re.compile(r"[*?\[]")
KEYS = ["orders", "thp_swap", "zswap_large"]


def order_sizes(sizes):
    """Sizes orders= and thp_swap_<size> take: allocation orders start at 16kB."""
    return [s for s in sizes if s != "8kB"]


class Section(object):
    def __init__(self, target, optional, origin):
        self.target = target
        self.optional = optional
        self.origin = origin                    # "file:line" of the header's first key
        self.keys = {}   # key -> (value, "file:line")

    def header(self):
        return "[%scgroup:%s]" % ("?" if self.optional else "", self.target)


def _kb(size):
    return int(size[:-2])


def _size(word, allowed, what):
    if word in allowed:
        return word
    m = re.match(r"^([0-9]+)([A-Za-z]*)$", word)
    hint = ""
    if m and m.group(2).lower() in ("k", "kb", "m", "mb") and m.group(2) != "kB":
        kb = int(m.group(1)) * (1024 if m.group(2).lower().startswith("m") else 1)
        if "%dkB" % kb in allowed:
            hint = " (sizes are written in kB: did you mean %dkB?)" % kb
    raise ValueError("no size %r for %s: one of %s%s" % (word, what, " ".join(allowed), hint))


def parse_key(key, value):
    """(key, normalised value) of one key of a cgroup section, or ValueError."""
    m = re.match(r"^(thp_swap|zswap_large)_(.+)$", key)
    base, size = (m.group(1), m.group(2)) if m else (key, None)
    if base not in KEYS:
        close = difflib.get_close_matches(key, KEYS + ["thp_swap_<size>", "zswap_large_<size>"], 1)
        raise KeyError("unknown key %r in a cgroup section%s (keys: orders, thp_swap, "
                       "thp_swap_<size>, zswap_large, zswap_large_<size>)" % (
                           key, " (did you mean %r?)" % close[0] if close else ""))
    if base == "orders":
        if value in ("none", "all"):
            return key, value
        words = [w.strip() for w in value.split(",")]
        got = set(_size(w, order_sizes(SIZES), "orders") for w in words if w)
        if not got:
            raise ValueError("orders: a comma-separated list of sizes, none or all")
        return key, ",".join(sorted(got, key=_kb))
    if size is not None:
        size = _size(size, order_sizes(SIZES) if base == "thp_swap" else SIZES, key)
        key = "%s_%s" % (base, size)
    if base == "thp_swap":
        if value not in POLICIES:
            raise ValueError("%s: %r is not one of %s" % (key, value, "|".join(POLICIES)))
        return key, value
    low = value.lower()
    if low in ("1", "0"):
        return key, low
    raise ValueError("%s: %r is not 0 or 1" % (key, value))


def check_target(target):
    """None, or why TARGET is not a cgroup path or systemd unit name."""
    if target.startswith("/"):
        if not PATH_RE.match(target) or "/../" in target + "/" or "//" in target:
            return "not a cgroup path (from the cgroup2 root, e.g. /system.slice/foo.service)"
        return None
    if not UNIT_RE.match(target):
        return "not a cgroup path (starting with /) nor a unit name (NAME.slice, .service, .scope)"
    if target.endswith(".slice") and target != "-.slice" and re.search(
            r"^-|--|-\.slice$", target):
        return "not a valid slice name (systemd: no leading, trailing or doubled '-')"
    return None


def add_entry(prof, section, optional, key, value, here, errors):
    """One assignment of a [cgroup:TARGET] section into prof.cgroups (later
    files win per key; an empty value drops the key)."""
    target = section[len(PREFIX):].strip()
    why = check_target(target)
    if why:
        errors.append("%s: [cgroup:%s]: %s" % (here, target, why))
        return
    sec = prof.cgroups.get(target)
    if sec is None:
        sec = prof.cgroups[target] = Section(target, optional, here)
    sec.optional = optional
    try:
        k, v = parse_key(key, value) if value != "" else (key, None)
    except (KeyError, ValueError) as e:
        errors.append("%s: [cgroup:%s]: %s" % (here, target, e.args[0]))
        return
    if v is None:
        sec.keys.pop(k, None)
    else:
        sec.keys[k] = (v, here)


def expand(sec, sizes):
    """(OrderedDict of the entry's keys as the kernel reads them back, notes)
    for a kernel with `sizes`."""
    notes, keys = [], dict((k, v) for k, (v, _) in sec.keys.items())
    osz = order_sizes(sizes)
    out = {}
    orders = keys.get("orders", "all")
    if orders not in ("none", "all"):
        # The sizes allowed that this kernel has (6.1: orders=16kB,64kB is none).
        orders = ",".join(s for s in orders.split(",") if s in osz) or "none"
    if orders != "all":
        out["orders"] = orders
    for base, own in (("thp_swap", osz), ("zswap_large", sizes)):
        for size in own:
            v = keys.get("%s_%s" % (base, size), keys.get(base))
            if v is not None and v != "inherit":
                out["%s_%s" % (base, size)] = v
        gone = [k for k in keys if k.startswith(base + "_") and k[len(base) + 1:] not in own]
        if gone:
            notes.append("%s: %s: no such size on this kernel (sizes %s), skipped" % (
                sec.header(), ", ".join(gone), " ".join(own)))
    return out, notes


def line(path, keys):
    return " ".join([path] + ["%s=%s" % kv for kv in keys.items()])


def read_entries(ctx):
    """{path: OrderedDict of keys} of the module's table now."""
    out = collections.OrderedDict()
    for text in (ctx.read(ENTRIES) or "").splitlines():
        parts = text.split()
        if parts and parts[0].startswith("/"):
            out[parts[0]] = dict(p.split("=", 1) for p in parts[1:] if "=" in p)
    return out


def read_stats(ctx):
    """{path: [(counter, size, n)]} of the module's per-entry counters."""
    out = collections.OrderedDict()
    for text in (ctx.read(POLICY + "/stats") or "").splitlines():
        parts = text.split()
        if not parts or not parts[0].startswith("/"):
            continue
        for p in parts[1:]:
            m = re.match(r"^([a-z_]+)_([0-9]+kB)=([0-9]+)$", p)
            if m:
                out.setdefault(parts[0], []).append((m.group(1), m.group(2), int(m.group(3))))
    return out


def numbers(ctx):
    """[(file, int)] of the table's files that hold one number and are
    states (enabled, nr_entries, max_entries), not counters (those are
    engine.counters')."""
    out = []
    counters = set(f.file for f in schema.MM_FILES
                   if f.dir == "cgroup_policy" and f.type == "counter")
    for n in ctx.listdir(POLICY):
        if n in counters:
            continue
        v = (ctx.read(POLICY + "/" + n) or "").strip()
        if v.isdigit():
            out.append((n, int(v)))
    return out


def live_sizes(ctx):
    return (ctx.read(POLICY + "/sizes") or "").split()


def present(ctx):
    return os.path.isdir(ctx.path(POLICY))


def slice_path(unit):
    """systemd's place of a slice: a-b-c.slice -> /a.slice/a-b.slice/a-b-c.slice."""
    if unit == "-.slice":
        return "/"
    parts = unit[:-len(".slice")].split("-")
    return "".join("/%s.slice" % "-".join(parts[:i + 1]) for i in range(len(parts)))


class Tree(object):
    """The cgroup2 tree under the root, walked once, when a name needs it."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.base = ctx.path(CGROOT)
        self._dirs = None

    def rel(self, p):
        r = os.path.relpath(p, self.base)
        return "/" if r == "." else "/" + r

    def dirs(self):
        if self._dirs is None:
            self._dirs = []
            for d, subs, _ in os.walk(self.base):
                subs.sort()
                self._dirs.extend(self.rel(os.path.join(d, s)) for s in subs)
        return self._dirs

    def resolve(self, target):
        """The cgroup paths TARGET names now, sorted."""
        if target.startswith("/"):
            if GLOB.search(target):
                return sorted(self.rel(p) for p in glob.glob(self.base + target)
                              if os.path.isdir(p))
            return [target] if os.path.isdir(self.base + target) else []
        if target.endswith(".slice") and not GLOB.search(target):
            p = slice_path(target)
            return [p] if os.path.isdir(self.base + p) else []
        return sorted(d for d in self.dirs() if fnmatch.fnmatchcase(os.path.basename(d), target))


class Plan(object):
    def __init__(self):
        self.absent = None      # the one line when the kernel has no cgroup_policy
        self.notes = []         # skipped sections, sizes this kernel lacks, overlaps
        self.missing = []       # [Section] required, matching no cgroup
        self.wanted = collections.OrderedDict()   # path -> (keys, Section)
        self.writes = []        # [(path, keys or None, before keys or None, origin)]
        self.enable = None      # (enabled before, after) when it is to change
        self.unchanged = 0

    def say_writes(self, say, verb, verb_saved):
        for path, keys, before, origin in self.writes:
            say("%s cgroup %s: %s (was %s)" % (
                verb_saved if origin == "saved original" else verb, path,
                describe(keys), describe(before)))
        if self.enable:
            say("%s %s = %s (was %s)" % (verb, "mmtune.cgroup_policy.enabled",
                                         self.enable[1], self.enable[0]))

    def summary(self, verb="written"):
        if not (self.wanted or self.writes or self.enable):
            return ""
        return "; cgroups: %d entr%s %s, %d already set" % (
            len(self.writes), "y" if len(self.writes) == 1 else "ies", verb, self.unchanged)

    def report(self, say):
        if self.absent:
            say(self.absent, prio=4)
        for n in self.notes:
            say(n)

    def missing_errors(self, ctx, say):
        for s in self.missing:
            say("error: %s: %s matches no cgroup under %s and is not marked optional "
                "(\"[?cgroup:...]\")" % (s.origin, s.header(), ctx.show(CGROOT)), err=True)


def own_switch(profile):
    """The profile sets [mmtune.cgroup_policy] enabled itself (a knob when
    knobs.tsv lists the file): then that setting rules, not the sections."""
    return bool(profile) and ENABLED_KNOB in profile.settings


def saved_of(state):
    """{"enabled": str or None, "table": {path: entry keys or None}} of the state."""
    cg = (state or {}).get("cgroups") or {}
    return {"enabled": cg.get("enabled"), "table": dict(cg.get("table") or {})}


def make_plan(ctx, profile, saved):
    """What applying profile does to the cgroup table; nothing written."""
    plan = Plan()
    sections = list(profile.cgroups.values()) if profile else []
    if not present(ctx):
        if sections:
            plan.absent = ("warning: kernel feature cgroup_policy is absent (no %s; needs %s): "
                           "skipped %s" % (ctx.show(POLICY), NEEDS,
                                           ", ".join(s.header() for s in sections)))
        return plan
    sizes, tree = live_sizes(ctx), Tree(ctx)
    for sec in sections:
        paths = tree.resolve(sec.target)
        if not paths:
            if sec.optional:
                plan.notes.append("skip %s: no such cgroup under %s; optional in %s" % (
                    sec.header(), ctx.show(CGROOT), sec.origin))
            else:
                plan.missing.append(sec)
            continue
        keys, notes = expand(sec, sizes)
        plan.notes.extend(notes)
        for p in paths:
            if p in plan.wanted:
                plan.notes.append("note: cgroup %s: %s (%s) replaces %s" % (
                    p, sec.header(), sec.origin, plan.wanted[p][1].header()))
            plan.wanted[p] = (keys, sec)
    for p in plan.wanted:
        # The module takes the nearest entry whole, never merged with an
        # ancestor's: say so where a profile nests entries.
        up = [a for a in plan.wanted if a != p and p.startswith(a.rstrip("/") + "/")]
        if up:
            a = max(up, key=len)
            plan.notes.append("note: cgroup %s: its entry (%s) replaces that of %s (%s) "
                              "whole: the keys it leaves unset follow the host, not %s" % (
                                  p, plan.wanted[p][1].header(), a, plan.wanted[a][1].header(),
                                  a))
    live = read_entries(ctx)
    for p, (keys, sec) in plan.wanted.items():
        want = keys or None             # no key left: the host's policy, no entry
        if live.get(p) == want or (want is None and p not in live):
            plan.unchanged += 1
        else:
            plan.writes.append((p, want, live.get(p), sec.origin))
    for p in sorted(saved["table"]):
        if p in plan.wanted:
            continue
        before = saved["table"][p]
        before = dict(before) if before else None
        if live.get(p) != before and os.path.isdir(ctx.path(CGROOT) + p):
            plan.writes.append((p, before, live.get(p), "saved original"))
    on = (ctx.read(ENABLED) or "").strip()
    if own_switch(profile):
        pass
    elif plan.wanted and on != "1":
        plan.enable = (on, "1")
    elif not plan.wanted and saved["enabled"] not in (None, on):
        plan.enable = (on, saved["enabled"])
    return plan


def _cmd(path, keys):
    return line(path, keys) if keys else "-" + path


def write(ctx, plan, say):
    """Write the plan's entries in order, then switch the table on; on a
    refusal put back what was written and return False."""
    done = []
    for w in plan.writes:
        path, keys, before, origin = w
        try:
            ctx.write_raw(ENTRIES, _cmd(path, keys))
        except OSError as e:
            say("error: writing %r to %s (%s) failed: %s" % (
                _cmd(path, keys), ctx.show(ENTRIES), origin,
                os.strerror(e.errno) if e.errno else e), err=True)
            _undo(ctx, done, None, say)
            return False
        done.append(w)
    if plan.enable:
        try:
            ctx.write_raw(ENABLED, plan.enable[1])
        except OSError as e:
            say("error: writing 1 to %s failed: %s" % (ctx.show(ENABLED), e), err=True)
            _undo(ctx, done, None, say)
            return False
    return True


def undo(ctx, plan, say):
    _undo(ctx, plan.writes, plan.enable and plan.enable[0], say)


def _undo(ctx, done, enabled, say):
    try:
        if enabled is not None:
            ctx.write_raw(ENABLED, enabled)
        for path, keys, before, _ in reversed(done):
            ctx.write_raw(ENTRIES, _cmd(path, before))
    except OSError as e:
        say("error: could not restore the cgroup policy table: %s" % e, err=True)


def describe(keys):
    return " ".join("%s=%s" % kv for kv in keys.items()) if keys else "(no entry)"


def saved_after(plan, saved):
    """The state's "cgroups" once the plan is written: the first value per path."""
    entries = dict(saved["table"])
    for path, keys, before, origin in plan.writes:
        if origin == "saved original":
            entries.pop(path, None)
        elif path not in entries:
            entries[path] = list(before.items()) if before else None
    enabled = saved["enabled"]
    if plan.enable and enabled is None:
        enabled = plan.enable[0]
    elif not plan.wanted:
        enabled = None
    return {"enabled": enabled, "table": entries} if entries or enabled is not None else None


def rollback_plan(ctx, saved, say):
    """The Plan putting back every saved entry and cgroup_policy/enabled."""
    plan = Plan()
    if not present(ctx):
        if saved["table"] or saved["enabled"] is not None:
            say("skip cgroup entries: %s is gone" % ctx.show(POLICY))
        return plan
    live = read_entries(ctx)
    for p in sorted(saved["table"]):
        before = dict(saved["table"][p]) if saved["table"][p] else None
        if p not in live and not os.path.isdir(ctx.path(CGROOT) + p):
            say("skip cgroup %s: removed since (its entry went with it)" % p)
        elif live.get(p) != before:
            plan.writes.append((p, before, live.get(p), "saved original"))
    on = (ctx.read(ENABLED) or "").strip()
    if saved["enabled"] not in (None, on):
        plan.enable = (on, saved["enabled"])
    return plan


def rows(ctx, profile):
    """One row per cgroup a section of the profile names (verify, status)."""
    out = []
    sections = list(profile.cgroups.values()) if profile else []
    if not sections:
        return out
    if not present(ctx):
        return [{"section": s.header(), "cgroup": None, "wanted": None, "live": None,
                 "state": "skipped", "absent_feature": "cgroup_policy", "origin": s.origin}
                for s in sections]
    plan = make_plan(ctx, profile, {"table": {}, "enabled": None})
    live = read_entries(ctx)
    for s in plan.missing:
        out.append({"section": s.header(), "cgroup": None, "wanted": None, "live": None,
                    "state": "missing", "origin": s.origin})
    for s in sections:
        if s not in plan.missing and not any(sec is s for _, sec in plan.wanted.values()):
            out.append({"section": s.header(), "cgroup": None, "wanted": None, "live": None,
                        "state": "skipped", "origin": s.origin})
    for p, (keys, s) in plan.wanted.items():
        want = keys or None
        out.append({"section": s.header(), "cgroup": p, "wanted": describe(want),
                    "live": describe(live.get(p)), "origin": s.origin,
                    "state": "match" if live.get(p) == want else "drift"})
    if plan.wanted and not own_switch(profile):
        on = (ctx.read(ENABLED) or "").strip()
        out.append({"section": None, "cgroup": None, "wanted": "enabled=1",
                    "live": "enabled=%s" % on, "origin": None,
                    "state": "match" if on == "1" else "drift"})
    return out
