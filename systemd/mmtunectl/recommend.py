"""Which profile a host gets: overrides first, then recommend rules.

Order (first that answers wins):
  1. kernel command line  mmtune.profile=NAME      (/proc/cmdline)
  2. runtime override     /run/mmtune/profile
  3. admin override       /etc/mmtune/profile      (config management owns it)
  4. the recorded pick    /var/lib/mmtune/auto-profile
  5. recommend rules      *.rules, see below
  6. "balanced"

The first apply --auto that picks by the rules (or the default) records
its pick, and later boots keep it: installing a program the rules look for
must not switch a running fleet to another profile unasked. `recommend`
still says what the rules pick now, status and the metrics flag a
difference, and `recommend --reset` forgets the record (next apply --auto
picks again).

Rules are data: recommend.rules from the first layer that has it, and
recommend.rules.d/*.rules from every layer (same masking and hiding as
profiles), drop-ins first in name order, then the main file. Each
[PROFILE] section is one rule; all of its conditions must hold; the first
matching rule wins. Conditions:
  virt=kvm|none        systemd-detect-virt output ("unknown" if it cannot run)
  chassis=rack-mount   DMI chassis type name (see CHASSIS)
  cpus=>=16 | 4..64    online CPU count
  mem=>=64G            MemTotal (K, M, G, T suffixes, binary)
  file=/usr/sbin/x|... a path exists (globs allowed)
  content=/proc/X:RE   a line of a file matches the regular expression
Alternatives are separated by "|" (not in content=, whose regular
expression has its own); a leading "!" negates the condition.
A fact that cannot be read (no DMI, no systemd-detect-virt) is "unknown":
a condition on it is false, negated or not, unless it lists "unknown".
"""

import glob
import os
import re

from .profile import ConfigError, NAME_RE, parse_ini, read_text

CONDITIONS = ("virt", "chassis", "cpus", "mem", "file", "content")

# SMBIOS 3.x chassis types.
CHASSIS = [None, "other", "unknown", "desktop", "low-profile-desktop", "pizza-box",
           "mini-tower", "tower", "portable", "laptop", "notebook", "hand-held",
           "docking-station", "all-in-one", "sub-notebook", "space-saving",
           "lunch-box", "main-server", "expansion", "sub-chassis", "bus-expansion",
           "peripheral", "raid", "rack-mount", "sealed-case-pc", "multi-system",
           "compact-pci", "advanced-tca", "blade", "blade-enclosure", "tablet",
           "convertible", "detachable", "iot-gateway", "embedded-pc", "mini-pc",
           "stick-pc"]
UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
RANGE_RE = re.compile(r"^(>=|<=|>|<)?\s*([0-9]+)([KMGT]?)(?:\.\.([0-9]+)([KMGT]?))?$")


class Selection(object):
    def __init__(self, name, source, reason, notes=()):
        self.name = name
        self.source = source
        self.reason = reason
        self.notes = list(notes)    # warnings met on the way (a stale record)


class Facts(object):
    """Host facts, each read once and only when a rule asks."""

    def __init__(self, ctx):
        self.ctx = ctx
        self._cache = {}

    def get(self, what):
        if what not in self._cache:
            self._cache[what] = getattr(self, "_" + what)()
        return self._cache[what]

    def _virt(self):
        return self.ctx.run_detect_virt()

    def _chassis(self):
        raw = (self.ctx.read("sys/class/dmi/id/chassis_type") or "").strip()
        if raw.isdigit() and 0 < int(raw) < len(CHASSIS):
            return CHASSIS[int(raw)]
        return "unknown"

    def _cpus(self):
        online = (self.ctx.read("sys/devices/system/cpu/online") or "").strip()
        if online:
            n = 0
            for part in online.split(","):
                lo, _, hi = part.partition("-")
                n += int(hi or lo) - int(lo) + 1
            return n
        info = self.ctx.read("proc/cpuinfo") or ""
        n = len(re.findall(r"^processor\s*:", info, re.M))
        return n or None

    def _mem(self):
        m = re.search(r"^MemTotal:\s*([0-9]+) kB", self.ctx.read("proc/meminfo") or "", re.M)
        return int(m.group(1)) * 1024 if m else None

    def describe(self):
        facts = dict((k, self.get(k)) for k in ("virt", "chassis", "cpus", "mem"))
        return dict((k, "unknown" if v is None else v) for k, v in facts.items())


def _range(text):
    """A predicate on numbers for "N", "N..M", ">=N", "<N"..., or None."""
    m = RANGE_RE.match(text.strip())
    if not m:
        return None
    op, a, ua, b, ub = m.groups()
    lo = int(a) * UNITS[ua]
    if b is not None:
        if op:
            return None
        hi = int(b) * UNITS[ub]
        return lambda v: lo <= v <= hi
    return {None: lambda v: v == lo, ">=": lambda v: v >= lo, "<=": lambda v: v <= lo,
            ">": lambda v: v > lo, "<": lambda v: v < lo}[op]


class Rule(object):
    def __init__(self, profile, origin):
        self.profile = profile
        self.origin = origin
        self.conds = []         # (key, negate, alternatives, line text)


def parse_rules(ctx, errors):
    """Rules in evaluation order, each with its file:line."""
    files = []
    chosen = {}
    for _, d in reversed(ctx.layers()):
        for f in ctx.listdir(d + "/recommend.rules.d"):
            if f.endswith(".rules"):
                chosen[f] = d + "/recommend.rules.d/" + f
    files = [chosen[f] for f in sorted(chosen) if not ctx.is_masked(chosen[f])]
    for _, d in ctx.layers():
        rel = d + "/recommend.rules"
        if ctx.is_masked(rel):
            break
        if os.path.isfile(ctx.path(rel)):
            files.append(rel)
            break
    rules = []
    for rel in files:
        shown = ctx.show(rel)
        text = read_text(ctx.path(rel), shown, errors)
        heads = []
        # Parsed like a profile (inline and header comments), so that every
        # rule and condition is seen as the file means it.
        entries, errs = parse_ini(text, shown, heads)
        errors.extend(errs)
        by_line = {}
        for n, name in heads:
            if not NAME_RE.match(name):
                errors.append("%s:%d: bad profile name %r" % (shown, n, name))
            by_line[n] = Rule(name, "%s:%d" % (shown, n))
            rules.append(by_line[n])
        for section, _, key, _, value, line in entries:
            rule = by_line[max(n for n in by_line if n < line)]
            here = "%s:%d" % (shown, line)
            if key not in CONDITIONS:
                errors.append("%s: unknown condition %r (known: %s)" % (
                    here, key, ", ".join(CONDITIONS)))
                continue
            neg = value.startswith("!")
            body = value[1:] if neg else value
            # A regular expression has its own "|": content= takes one.
            alts = [body] if key == "content" else [a.strip() for a in body.split("|") if a.strip()]
            if not alts:
                errors.append("%s: %s= needs a value" % (here, key))
                continue
            for a in alts:
                if key in ("cpus", "mem") and _range(a) is None:
                    errors.append("%s: bad range %r (N, N..M, >=N, <=N; mem takes K/M/G/T)"
                                  % (here, a))
                if key == "content":
                    path, sep, rx = a.partition(":")
                    try:
                        re.compile(rx)
                    except re.error as e:
                        errors.append("%s: bad regular expression %r: %s" % (here, rx, e))
                    if not sep or not path.startswith("/"):
                        errors.append("%s: content= takes /path:REGEX" % here)
            rule.conds.append((key, neg, alts, "%s=%s" % (key, value)))
    return rules


def _holds(ctx, facts, key, alts):
    """True, False, or None when the fact is unknown."""
    if key in ("virt", "chassis"):
        v = facts.get(key)
        if v == "unknown" and "unknown" not in alts:
            return None
        return v in alts
    if key in ("cpus", "mem"):
        v = facts.get(key)
        if v is None:
            return None
        return any(_range(a)(v) for a in alts)
    if key == "file":
        return any(glob.glob(ctx.path(a)) for a in alts)
    for a in alts:
        path, _, rx = a.partition(":")
        text = ctx.read(path)
        if text is not None and re.search(rx, text, re.M):
            return True
    return False


def match(ctx, facts=None):
    """(rule, reasons) of the first matching rule, or (None, [])."""
    errors = []
    rules = parse_rules(ctx, errors)
    if errors:
        raise ConfigError(errors)
    facts = facts or Facts(ctx)
    for rule in rules:
        reasons = []
        for key, neg, alts, text in rule.conds:
            r = _holds(ctx, facts, key, alts)
            if r is None or r == neg:
                break
            reasons.append(text)
        else:
            return rule, reasons
    return None, []


def read_override(ctx, rel):
    if not ctx.exists(rel):
        return None
    errors = []
    text = read_text(ctx.path(rel), ctx.show(rel), errors)
    if errors:
        raise ConfigError(errors)
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if line and not line.startswith("#"):
            if not NAME_RE.match(line):
                # Not echoed: the file may be a symlink to anything.
                raise ConfigError(["%s:%d: not a profile name (letters, digits, '_', '.', "
                                   "'-')" % (ctx.show(rel), n)])
            return line
    return None


RECORD = "var/lib/mmtune/auto-profile"


def recorded(ctx, notes=None):
    """(name, reason) of the recorded pick, or (None, None).

    The record is mmtunectl's own state, never the admin's input: one that
    cannot be used (unreadable, or naming a profile since removed or
    masked) counts as none, so that the boot picks by the rules again
    instead of failing every boot; notes gets a line saying so."""
    try:
        name = read_override(ctx, RECORD)
        why = None
    except ConfigError as e:
        name, why = None, "%s (unusable record)" % e.errors[0]
    if name:
        from .profile import Loader
        rel, masked = Loader(ctx).main_file(name)
        if rel is None or masked:
            why = "%s: records profile %r, which %s" % (
                ctx.show(RECORD), name, "is masked by " + ctx.show(rel) if masked
                else "no longer exists")
            name = None
    if why and notes is not None:
        notes.append("warning: %s: ignored, the rules pick again and the next apply --auto "
                     "records their pick (`mmtunectl recommend --reset` removes it now; "
                     "/etc/mmtune/profile names a profile for good)" % why)
    if not name:
        return None, None
    reason = ""
    for line in (ctx.read(RECORD) or "").splitlines():
        if line.startswith("# reason: "):
            reason = line[len("# reason: "):]
    return name, reason


def record(ctx, sel):
    """Keep the profile the rules (or the default) picked for later boots."""
    os.makedirs(os.path.dirname(ctx.path(RECORD)), mode=0o755, exist_ok=True)
    tmp = ctx.path(RECORD) + ".tmp"
    with open(tmp, "w") as f:
        f.write("# The profile mmtunectl apply --auto picked by the recommend rules on %s;\n"
                "# kept until an override names another or `mmtunectl recommend --reset`.\n"
                "# reason: %s\n%s\n" % (ctx.now(), sel.reason, sel.name))
    os.rename(tmp, ctx.path(RECORD))


def select(ctx, use_overrides=True, use_record=True):
    notes = []
    sel = _select(ctx, use_overrides, use_record, notes)
    sel.notes.extend(notes)
    return sel


def _select(ctx, use_overrides, use_record, notes):
    if use_overrides:
        for arg in (ctx.read("proc/cmdline") or "").split():
            if arg.startswith("mmtune.profile="):
                name = arg.split("=", 1)[1]
                if not NAME_RE.match(name):
                    raise ConfigError(["/proc/cmdline: bad profile name %r" % name])
                return Selection(name, "cmdline", "kernel command line mmtune.profile=" + name)
        for source, rel in (("runtime-override", "run/mmtune/profile"),
                            ("admin-override", "etc/mmtune/profile")):
            name = read_override(ctx, rel)
            if name:
                return Selection(name, source, "override in " + ctx.show(rel))
    if use_record:
        name, reason = recorded(ctx, notes)
        if name:
            return Selection(name, "recorded", "recorded in %s by the first apply --auto (%s)"
                             % (ctx.show(RECORD), reason))
    rule, reasons = match(ctx)
    if rule:
        why = ", ".join(reasons) if reasons else "no conditions"
        return Selection(rule.profile, "recommend",
                         "recommend rule %s [%s]: %s" % (rule.origin, rule.profile, why))
    return Selection("balanced", "default", "no override and no recommend rule matched")
