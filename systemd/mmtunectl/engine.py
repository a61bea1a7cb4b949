"""Reading and writing knobs: apply, verify, rollback, and the saved state.

apply is all or nothing:
  - the whole layered profile is parsed and validated before any write;
  - a knob this kernel lacks is skipped with a message if the profile marks
    it optional ("?"), and is an error otherwise;
  - knobs are written in schema order; if a write fails, every knob already
    written is put back to the value it had, and the failure is reported;
  - every written value is read back: applied means the kernel holds it.

State lives in /run/mmtune/state.json (tmpfs: it describes this boot only,
like the kernel values it records): the active profile, why it was chosen,
and for every knob mmtune changed the value it had before mmtune first
changed it. Applying another profile first puts back the knobs the new
profile does not set, so the result of "apply X" does not depend on what
was applied before; rollback puts every saved knob back and forgets the
state. A lock file serialises concurrent runs (boot unit and udev re-apply).
"""

import collections
import fcntl
import json
import os
import re
import time

from . import cgroups, journal, schema
from .profile import normalise_live, satisfied

STATE = "run/mmtune/state.json"
LOCK = "run/mmtune/lock"
LAST_APPLY = "run/mmtune/last-apply.json"
DEFAULT_LOCK_TIMEOUT = 30


class LockTimeout(Exception):
    pass


def lock_holders(path):
    """PIDs holding a flock on path, from /proc/locks (the kernel's own
    list, so also a holder that is not mmtunectl, e.g. flock(1))."""
    try:
        st = os.stat(path)
        with open("/proc/locks") as f:
            lines = f.read().splitlines()
    except OSError:
        return []
    dev = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    pids = []
    for line in lines:
        parts = line.split()
        # "1: FLOCK  ADVISORY  WRITE 1234 00:1a:5678 0 EOF" ("->" for waiters)
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[2] != "->" and parts[5] == dev:
            pids.append(parts[4])
    return pids


class Lock(object):
    """/run/mmtune/lock, with a deadline: a hung holder must not hang boot."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.timeout = getattr(ctx, "lock_timeout", DEFAULT_LOCK_TIMEOUT)

    def __enter__(self):
        os.makedirs(self.ctx.path("run/mmtune"), mode=0o755, exist_ok=True)
        path = self.ctx.path(LOCK)
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return self
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holders = lock_holders(path)
                    os.close(self.fd)
                    raise LockTimeout(
                        "%s is held by %s; gave up after %g s (--lock-timeout); nothing changed"
                        % (self.ctx.show(LOCK), "pid " + ", ".join(holders) if holders
                           else "another process", self.timeout))
                time.sleep(0.05)

    def __exit__(self, *exc):
        os.close(self.fd)


def read_knob(ctx, knob):
    """Normalised live value, or None when this kernel has no such file."""
    text = ctx.read(knob.path)
    return None if text is None else normalise_live(knob, text)


def in_use(ctx, knob):
    """(knob, live value) of the form of knob's setting the kernel uses: for
    one of schema.PAIRS the bytes form when it reads non-zero, else the
    ratio; for any other knob, itself."""
    if not knob.pair:
        return knob, read_knob(ctx, knob)
    ratio, nbytes = [schema.BY_NAME[n] for n in schema.PAIRS_OF[knob.name]]
    v = read_knob(ctx, nbytes)
    if v not in (None, "0"):
        return nbytes, v
    return ratio, read_knob(ctx, ratio)


def holds(ctx, knob, value):
    """The kernel holds value in knob, and for a pair uses that form."""
    return in_use(ctx, knob) == (knob, value)


def pair_saved(saved, knob):
    """The name under which saved holds knob's setting (itself or its pair)."""
    if knob.name in saved:
        return knob.name
    if knob.pair and knob.pair in saved:
        return knob.pair
    return None


def load_state(ctx):
    text = ctx.read(STATE)
    if text is None:
        return None
    try:
        state = json.loads(text)
        if not isinstance(state, dict):
            raise ValueError("not a JSON object")
        saved = state.get("saved")
        if not isinstance(saved, dict) or not all(
                isinstance(v, str) for v in saved.values()):
            raise ValueError("no saved values (an object of strings)")
        for key in ("profile", "source", "reason", "applied_at"):
            if not isinstance(state.get(key, ""), (str, type(None))):
                raise ValueError("%s is not a string" % key)
        cg = state.get("cgroups")
        if cg is not None and not (isinstance(cg, dict) and isinstance(cg.get("table", {}), dict)
                                   and isinstance(cg.get("enabled", ""), (str, type(None)))):
            raise ValueError("cgroups is not an object of a table and enabled")
        for key in ("refused", "files", "other_line"):
            v = state.get(key, [])
            if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
                raise ValueError("%s is not a list of strings" % key)
        return state
    except ValueError as e:
        raise StateError("%s: unreadable state (%s); remove it to start over"
                         % (ctx.show(STATE), e))


class StateError(Exception):
    pass


def save_json(ctx, rel, doc):
    """Write to a temporary file and rename: never a half-written file."""
    path = ctx.path(rel)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(tmp, path)


def save_state(ctx, state):
    save_json(ctx, STATE, state)


def load_last_apply(ctx):
    """The last apply attempt this boot: {time, success, profile, ...} or None."""
    try:
        doc = json.loads(ctx.read(LAST_APPLY) or "null")
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def record(ctx, action, profile, success, changes, refused=(), error=None, reload=False):
    """One journal entry per apply and rollback (manual or from the unit),
    and the last attempt in /run/mmtune/last-apply.json for the metrics."""
    uid = ctx.uid
    verb = {"apply": "re-apply" if reload else "apply", "rollback": "rollback"}[action]
    detail = ", ".join("%s %s->%s" % (c.knob.name, was(c), c.target) for c in changes)
    if success:
        msg = "%s profile %s by uid %d: %d changed%s%s" % (
            verb, profile, uid, len(changes), (": " + detail) if detail else "",
            ("; %d optional refused: %s" % (len(refused), ", ".join(
                "%s (%s)" % (c.knob.name, why) for c, why in refused))) if refused else "")
        prio = journal.WARNING if refused else journal.NOTICE
    else:
        msg = "%s profile %s by uid %d failed: %s; %s" % (
            verb, profile, uid, error,
            "the previous values are kept" if action == "apply" else "nothing rolled back")
        prio = journal.ERR
    journal.send(ctx, prio, msg, MESSAGE_ID=journal.MESSAGE_IDS[(action, success)],
                 MMTUNE_ACTION=verb, MMTUNE_PROFILE=profile, MMTUNE_UID=uid,
                 MMTUNE_RESULT="success" if success else "failed",
                 MMTUNE_CHANGES="\n".join("%s %s -> %s" % (c.knob.name, was(c), c.target)
                                          for c in changes))
    if action == "apply":
        try:
            os.makedirs(ctx.path("run/mmtune"), mode=0o755, exist_ok=True)
            save_json(ctx, LAST_APPLY, {"time": ctx.clock(), "success": success,
                                         "profile": profile, "uid": uid, "error": error,
                                         "refused": [c.knob.name for c, _ in refused]})
        except OSError:
            pass


def _reason(e):
    if isinstance(e, OSError):
        return os.strerror(e.errno) if e.errno else str(e)
    return str(e)


# One knob to write: target value, the value before, where the target comes
# from, whether the profile marks it optional ("?"), and the knob that held
# the value before (undo): knob itself, or for a pair the form in use, which
# is what putting it back must write (writing 0 to the other form would
# zero both).
Change = collections.namedtuple("Change", "knob target before origin optional undo")


def change(ctx, knob, target, origin, optional):
    undo, before = in_use(ctx, knob)
    return Change(knob, target, before, origin, optional, undo)


def was(c):
    """The value before, naming the other form of a pair when that was in use."""
    return c.before if c.undo is c.knob else "%s = %s" % (c.undo.name, c.before)


def set_knob(ctx, knob, value):
    """Write value to knob. The kernel takes a pair's ratio form only when
    the ratio changes (dirty_ratio_handler() zeroes dirty_bytes only then):
    to put in force the ratio the file reads already (0 while the bytes
    form is in use), another ratio is written first."""
    if (knob.pair and schema.PAIRS_OF[knob.name][0] == knob.name
            and read_knob(ctx, knob) == value and not holds(ctx, knob, value)):
        ctx.write_raw(knob.path, "1" if value == "0" else "0")
    ctx.write_raw(knob.path, value)


def _write(ctx, c, value):
    set_knob(ctx, c.knob, value)


def _undo(ctx, c):
    set_knob(ctx, c.undo, c.before)


def write_all(ctx, plan, say):
    """Write plan [Change]; all or nothing for required knobs.

    Returns (ok, written, refused). ok: every required target is written and
    read back; otherwise what was written is restored and reported. An
    optional knob the kernel refuses (EINVAL, EBUSY, or a value it does not
    keep) is put back, reported as a warning and returned in refused
    [(Change, reason)]: one feature the kernel will not take must not cost
    the host every other setting. Knobs the kernel checks against each
    other (schema.RELATIONS) may be refused only because of the order; they
    get one retry after the rest.
    """
    related = set(r[0] for r in schema.RELATIONS) | set(r[2] for r in schema.RELATIONS)
    written, deferred, refused, failure = [], [], [], None
    for c in plan:
        try:
            _write(ctx, c, c.target)
            written.append(c)
        except OSError as e:
            if c.knob.name in related:
                deferred.append(c)
            elif c.optional:
                refused.append((c, _reason(e)))
            else:
                failure = (c, _reason(e))
                break
    for c in deferred:
        if failure:
            break
        try:
            _write(ctx, c, c.target)
            written.append(c)
        except OSError as e:
            if c.optional:
                refused.append((c, _reason(e)))
            else:
                failure = (c, _reason(e))
    if not failure:
        for c in list(written):
            if holds(ctx, c.knob, c.target):
                continue
            why = "read back %r: the kernel did not keep the value" % read_knob(ctx, c.knob)
            if not c.optional:
                failure = (c, why)
                break
            written.remove(c)
            try:
                _undo(ctx, c)
            except OSError:
                pass
            refused.append((c, why))
    for c, why in refused:
        say("warning: %s: the kernel refused %r (%s): %s; optional in %s, skipped" % (
            c.knob.name, c.target, ctx.show(c.knob.path), why, c.origin), err=True, prio=4)
    if not failure:
        return True, written, refused
    c = failure[0]
    say("error: writing %r to %s (%s, %s) failed: %s" % (
        c.target, ctx.show(c.knob.path), c.knob.name, c.origin, failure[1]), err=True)
    lost = []
    for w in reversed(written):
        try:
            _undo(ctx, w)
        except OSError as e:
            lost.append("%s (%s)" % (w.undo.name, _reason(e)))
            continue
        if not holds(ctx, w.undo, w.before):
            lost.append("%s (reads %r, wanted %r)" % (w.undo.name, read_knob(ctx, w.undo), w.before))
    if lost:
        say("error: could not restore: %s" % ", ".join(lost), err=True)
    else:
        say("restored %d knob(s) written before the failure%s; nothing changed" % (
            len(written), (": " + ", ".join(w.knob.name for w in written)) if written else ""),
            err=True)
    return False, [], refused


def _skip_msg(ctx, setting):
    k = setting.knob
    return "skip %s: not on this kernel (%s, provided by %s); optional in %s" % (
        k.name, ctx.show(k.path), k.provider, setting.origin)


def sysctl_d_overrides(ctx, profile):
    """[(Setting, value, "file:line")]: the sysctl.d assignments the profile
    overrides (the same knob or the other form of its pair, another value).
    mmtune.service runs after systemd-sysctl.service: the profile wins at
    boot, and `sysctl --system` would put the file's value back."""
    from . import sysctld
    files = sysctld.read(ctx)
    out = []
    for s in (profile.ordered() if profile else []):
        for name in (s.knob.name, s.knob.pair):
            if name in files and (name != s.knob.name or files[name][0] != s.value):
                out.append((s, files[name][0] if name == s.knob.name
                            else "%s = %s" % (name, files[name][0]), files[name][1]))
    return out


def sysctl_d_msg(s, value, where):
    return ("note: %s: %s sets %s at boot; the profile's %s wins (mmtune.service runs after "
            "systemd-sysctl.service; `sysctl --system` would put it back)" % (
                s.knob.name, where, value, s.wanted()))


RELEASE = "proc/sys/kernel/osrelease"


def kernel_line(ctx):
    """(release, line): uname -r and its "major.minor" ("6.12"), each None
    when it cannot be read. The line decides which knobs exist at all
    (schema.LINES, Knob.lines)."""
    release = (ctx.read(RELEASE) or "").strip() or None
    m = re.match(r"^([0-9]+)\.([0-9]+)", release or "")
    return release, ("%s.%s" % m.groups() if m else None)


def other_line(ctx, knob, line):
    """The lines of knob when it is a file of another kernel line than the
    running one (a line of schema.LINES) and absent here, else None: such a
    knob is skipped whatever the profile says, with one line for all."""
    if (knob.lines and line in schema.LINES and line not in knob.lines
            and not ctx.exists(knob.path)):
        return knob.lines
    return None


def other_line_settings(ctx, settings):
    """[Setting] of the settings that are knobs of another kernel line."""
    line = kernel_line(ctx)[1]
    return [s for s in settings if other_line(ctx, s.knob, line)]


def other_line_msg(ctx, settings):
    """The one line that says which knobs of the profile this kernel line
    does not have."""
    line = kernel_line(ctx)[1]
    lines = sorted(set(l for s in settings for l in s.knob.lines),
                   key=lambda l: tuple(int(x) for x in l.split(".")))
    return "skipped: %d knob(s) not on this kernel line (%s), only on %s: %s" % (
        len(settings), line, " and ".join(lines), ", ".join(s.knob.name for s in settings))


def absent_feature(ctx, knob):
    """The outermost kernel feature (schema.FEATURES) of knob that this
    kernel lacks, or None: no zswap, no mmtune.ko, an mTHP size it lacks."""
    found, f = None, knob.name if knob.name in schema.FEATURES else knob.feature
    while f:
        path, parent, _ = schema.FEATURES[f]
        if not ctx.exists(path):
            found = f
        f = parent
    return found


def absent_features(ctx, settings):
    """{feature: [Setting]} of the settings whose feature is absent, in order."""
    out = collections.OrderedDict()
    for s in settings:
        f = absent_feature(ctx, s.knob)
        if f:
            out.setdefault(f, []).append(s)
    return out


def feature_msg(ctx, feature, settings):
    path, _, provider = schema.FEATURES[feature]
    return "warning: kernel %s %s is absent (no %s; needs %s): skipped %s" % (
        "file of" if feature in schema.BY_NAME else "feature", feature, ctx.show(path),
        provider, ", ".join(s.knob.name for s in settings))


class Plan(object):
    """What applying a profile would do, computed without writing."""

    def __init__(self):
        self.writes = []        # [Change] the profile sets
        self.restores = []      # [Change] knobs of an earlier apply this profile leaves alone
        self.missing = []       # [Setting] required, absent on this kernel
        self.skips = []         # messages: optional absent, owned by tuned
        self.absent = {}        # {feature: [Setting]}: this kernel lacks the feature
        self.other_line = []    # [Setting] knobs of another kernel line
        self.unchanged = 0

    def changes(self):
        return self.writes + self.restores

    def skipped(self):
        return (len(self.skips) + len(self.other_line)
                + sum(len(v) for v in self.absent.values()))

    def report(self, ctx, say):
        """The skip lines: one for the knobs of another kernel line, one per
        absent feature, one per other skipped knob."""
        if self.other_line:
            say(other_line_msg(ctx, self.other_line))
        for f, settings in self.absent.items():
            say(feature_msg(ctx, f, settings), prio=journal.WARNING)
        for m in self.skips:
            say(m)


def make_plan(ctx, profile, owned, saved):
    plan = Plan()
    mine = [s for s in profile.ordered() if s.knob.name not in owned]
    # A knob of another kernel line is never there: not an error, whatever
    # the profile says. Required means required where the kernel has the
    # feature.
    plan.other_line = other_line_settings(ctx, mine)
    absent = set(s.knob.name for s in plan.other_line)
    plan.absent = absent_features(ctx, [s for s in mine if s.knob.name not in absent])
    absent |= set(s.knob.name for v in plan.absent.values() for s in v)
    for s in profile.ordered():
        k = s.knob
        if k.name in owned:
            plan.skips.append("skip %s: owned by %s" % (k.name, owned[k.name]))
            continue
        if k.name in absent:
            continue
        live = read_knob(ctx, k)
        if live is None:
            if s.optional:
                plan.skips.append(_skip_msg(ctx, s))
            else:
                plan.missing.append(s)
            continue
        c = change(ctx, k, s.value, s.origin, s.optional)
        # A bound (">=N") is judged against the value the knob had before
        # mmtune changed it, so that the outcome does not depend on the
        # profile applied before this one.
        base = saved.get(k.name, live) if c.undo is k else None
        target = base if s.op != "=" and base is not None and satisfied(s, base) else s.value
        if c.undo is k and live == target:
            plan.unchanged += 1
            continue
        plan.writes.append(c._replace(target=target))
    # Knobs an earlier apply changed that this profile leaves alone go back
    # to their original values (a pair: the form saved, with its value).
    for k in schema.KNOBS:
        if (k.name in saved and k.name not in profile.settings and k.name not in owned
                and not (k.pair and k.pair in profile.settings)):
            if read_knob(ctx, k) is not None and not holds(ctx, k, saved[k.name]):
                plan.restores.append(change(ctx, k, saved[k.name], "saved original", False))
    return plan


def missing_error(ctx, plan, say):
    for s in plan.missing:
        say("error: %s: %s is missing on this kernel (provided by %s) and not "
            "marked optional (\"?\") in the profile" % (
                s.origin, ctx.show(s.knob.path), s.knob.provider), err=True)


def apply(ctx, profile, selection, owned, say, reload=False):
    """Apply a validated profile. Returns the exit code (0 or 2)."""
    with Lock(ctx):
        state = load_state(ctx) or {"saved": {}}
        saved = dict(state["saved"])
        plan = make_plan(ctx, profile, owned, saved)
        plan.report(ctx, say)
        cg_saved = cgroups.saved_of(state)
        cg = cgroups.make_plan(ctx, profile, cg_saved)
        cg.report(say)
        if plan.missing or cg.missing:
            missing_error(ctx, plan, say)
            cg.missing_errors(ctx, say)
            say("error: nothing applied", err=True)
            record(ctx, "apply", profile.name, False, [], error="required knobs missing: " +
                   ", ".join([s.knob.name for s in plan.missing] +
                             [s.header() for s in cg.missing]), reload=reload)
            return 2
        # The cgroup entries first: a refused entry (EINVAL, ENOSPC) leaves
        # every knob as it was; a refused knob puts the entries back.
        ok, written, refused = cgroups.write(ctx, cg, say), [], []
        if ok:
            ok, written, refused = write_all(ctx, plan.changes(), say)
            if not ok:
                cgroups.undo(ctx, cg, say)
        if not ok:
            record(ctx, "apply", profile.name, False, [], refused,
                   error="a write failed, every knob written before it was restored",
                   reload=reload)
            return 2
        for c in written:
            if c in plan.writes:
                # The first value this boot, under the form then in use.
                if not pair_saved(saved, c.knob):
                    saved[c.undo.name] = c.before
            else:
                saved.pop(c.knob.name, None)
        save_state(ctx, {"version": 1, "profile": profile.name, "source": selection.source,
                         "reason": selection.reason, "applied_at": ctx.now(),
                         "files": profile.files, "saved": saved,
                         "refused": [c.knob.name for c, _ in refused],
                         "absent_features": dict((f, [x.knob.name for x in v])
                                                 for f, v in plan.absent.items()),
                         "kernel_line": kernel_line(ctx)[1],
                         "other_line": [x.knob.name for x in plan.other_line],
                         "cgroups": cgroups.saved_after(cg, cg_saved)})
        for c in plan.writes:
            if c in written:
                say("set %s = %s (was %s)" % (c.knob.name, c.target, was(c)))
        for c in plan.restores:
            if c in written:
                say("restored %s = %s (not in this profile)" % (c.knob.name, c.target))
        cg.say_writes(say, "set", "restored")
        say("applied profile %s: %d written, %d already set, %d restored, %d skipped%s%s" % (
            profile.name, len([c for c in written if c in plan.writes]), plan.unchanged,
            len([c for c in written if c in plan.restores]), plan.skipped(),
            ", %d refused" % len(refused) if refused else "", cg.summary()))
        record(ctx, "apply", profile.name, True, written, refused, reload=reload)
        return 0


def rollback(ctx, owned, say):
    with Lock(ctx):
        state = load_state(ctx)
        cg_saved = cgroups.saved_of(state)
        if not state or not state["saved"] and not state.get("cgroups"):
            if state:
                os.unlink(ctx.path(STATE))
            say("nothing to roll back")
            return 0
        plan = []
        for name in sorted(state["saved"]):
            if name not in schema.BY_NAME:
                say("skip %s: not a knob of this mmtunectl" % name)
        for k in schema.KNOBS:
            if k.name not in state["saved"]:
                continue
            live = read_knob(ctx, k)
            if k.name in owned:
                # tuned took it over since: restoring would fight tuned.
                say("skip %s: owned by %s" % (k.name, owned[k.name]))
            elif live is None:
                say("skip %s: gone from this kernel (%s)" % (k.name, ctx.show(k.path)))
            elif not holds(ctx, k, state["saved"][k.name]):
                plan.append(change(ctx, k, state["saved"][k.name], "saved original", False))
        cg = cgroups.rollback_plan(ctx, cg_saved, say)
        ok = cgroups.write(ctx, cg, say)
        if ok:
            ok, written, _ = write_all(ctx, plan, say)
            if not ok:
                cgroups.undo(ctx, cg, say)
        if not ok:
            record(ctx, "rollback", state.get("profile"), False, [],
                   error="a write failed, every knob written before it was restored")
            return 2
        os.unlink(ctx.path(STATE))
        for c in plan:
            say("restored %s = %s (was %s)" % (c.knob.name, c.target, was(c)))
        cg.say_writes(say, "restored", "restored")
        say("rolled back profile %s: %d knob(s) restored%s" % (
            state.get("profile"), len(plan), cg.summary("restored")))
        record(ctx, "rollback", state.get("profile"), True, plan)
        return 0


def knob_rows(ctx, profile, owned):
    """One row per schema knob: wanted, live and state (match, drift...)."""
    rows = []
    line = kernel_line(ctx)[1]
    for k in schema.KNOBS:
        s = profile.settings.get(k.name) if profile else None
        live = read_knob(ctx, k)
        row = {"name": k.name, "path": ctx.show(k.path), "live": live,
               "wanted": s.wanted() if s else None, "optional": bool(s and s.optional),
               "origin": s.origin if s else None}
        if not s:
            row["state"] = "unmanaged"
        elif k.name in owned:
            row["state"] = "tuned"
            row["owner"] = owned[k.name]
        elif live is None and other_line(ctx, k, line):
            row["state"] = "skipped"
            row["kernel_lines"] = list(k.lines)
        elif live is None and absent_feature(ctx, k):
            row["state"] = "skipped"
            row["absent_feature"] = absent_feature(ctx, k)
        elif live is None:
            row["state"] = "skipped" if s.optional else "missing"
        else:
            row["state"] = "match" if satisfied(s, live) else "drift"
            form, value = in_use(ctx, k)
            if form is not k:
                # The kernel uses the other form: the setting differs
                # even when this one's file happens to read as wanted.
                row["state"] = "drift"
                row["in_use"] = "%s = %s" % (form.name, value)
        rows.append(row)
    return rows


def counters(ctx):
    """Every counter of the loaded module: {"mmtune.DIR.FILE": int}.

    The files knobs.tsv types "counter", and any other file of a feature
    directory that is read-only and holds one number: a newer module's
    counter shows up before this mmtunectl knows its name.
    """
    out = {}
    known = dict(((f.dir, f.file), f) for f in schema.MM_FILES)
    base = ctx.path(schema.MMTUNE)
    try:
        dirs = sorted(d for d in os.listdir(base) if os.path.isdir(os.path.join(base, d)))
    except OSError:
        return out
    for d in dirs:
        try:
            files = sorted(os.listdir(os.path.join(base, d)))
        except OSError:
            continue
        for n in files:
            f = known.get((d, n))
            if f is not None and f.type != "counter":
                continue
            p = os.path.join(base, d, n)
            if f is None and (not os.path.isfile(p) or os.stat(p).st_mode & 0o222):
                continue
            text = ctx.read("%s/%s/%s" % (schema.MMTUNE, d, n))
            v = (text or "").strip()
            if v.isdigit():
                out["mmtune.%s.%s" % (d, n)] = int(v)
    return out


def size_dirs(ctx):
    """[(size, rel dir)] of the kernel's hugepages-<size>kB directories,
    smallest first (6.12; none on 6.1)."""
    out = []
    for n in ctx.listdir(schema.THP):
        m = re.match(r"^hugepages-([0-9]+)kB$", n)
        if m and os.path.isdir(ctx.path(schema.THP + "/" + n)):
            out.append((int(m.group(1)), n))
    return [("%dkB" % kb, schema.THP + "/" + n) for kb, n in sorted(out)]


def size_counters(ctx):
    """{size: {stat: int}}: every number in the kernel's
    hugepages-<size>kB/stats/ (anon_fault_alloc, swpout, swpout_fallback,
    split, nr_anon, ...; zswpout with the 6.12 series' zswap patch): the
    per-size counters of the mTHP swap-out and zswap paths mmtune tunes."""
    out = collections.OrderedDict()
    for size, d in size_dirs(ctx):
        stats = {}
        for n in ctx.listdir(d + "/stats"):
            v = (ctx.read("%s/stats/%s" % (d, n)) or "").strip()
            if v.isdigit():
                stats[n] = int(v)
        if stats:
            out[size] = stats
    return out


def gauges(ctx):
    """Read-only 0/1 state files of the table (e.g. swap_slots/active)."""
    out = {}
    for d, names in sorted(schema.GAUGES.items()):
        for n in names:
            v = (ctx.read("%s/%s/%s" % (schema.MMTUNE, d, n)) or "").strip()
            if v.isdigit():
                out["mmtune.%s.%s" % (d, n)] = int(v)
    return out


def module_info(ctx):
    info = {"loaded": os.path.isdir(ctx.path(schema.MMTUNE)), "features": {}}
    for f in schema.MMTUNE_INFO:
        text = ctx.read(schema.MMTUNE + "/" + f)
        info[f] = text.strip() if text is not None else None
    for line in (ctx.read(schema.MMTUNE + "/features") or "").splitlines():
        parts = line.split()
        if len(parts) == 2:
            info["features"][parts[0]] = parts[1]
    return info


