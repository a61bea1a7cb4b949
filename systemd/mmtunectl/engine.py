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

import fcntl
import json
import os

from . import schema
from .profile import normalise_live, satisfied

STATE = "run/mmtune/state.json"
LOCK = "run/mmtune/lock"


class Lock(object):
    def __init__(self, ctx):
        self.ctx = ctx

    def __enter__(self):
        os.makedirs(self.ctx.path("run/mmtune"), mode=0o755, exist_ok=True)
        self.fd = os.open(self.ctx.path(LOCK), os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        os.close(self.fd)


def read_knob(ctx, knob):
    """Normalised live value, or None when this kernel has no such file."""
    text = ctx.read(knob.path)
    return None if text is None else normalise_live(knob, text)


def load_state(ctx):
    text = ctx.read(STATE)
    if text is None:
        return None
    try:
        state = json.loads(text)
        if not isinstance(state.get("saved"), dict):
            raise ValueError("no saved values")
        return state
    except ValueError as e:
        raise StateError("%s: unreadable state (%s); remove it to start over"
                         % (ctx.show(STATE), e))


class StateError(Exception):
    pass


def save_state(ctx, state):
    """Write to a temporary file and rename: never a half-written state."""
    path = ctx.path(STATE)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(state, f, indent=1, sort_keys=True)
        f.write("\n")
    os.rename(tmp, path)


def _reason(e):
    if isinstance(e, OSError):
        return os.strerror(e.errno) if e.errno else str(e)
    return str(e)


def write_all(ctx, plan, say):
    """Write plan [(knob, target, before, origin)]; all or nothing.

    Returns True when every target is written and read back. Otherwise
    restores what was written, reports, and returns False. Knobs the kernel
    checks against each other (schema.RELATIONS) may be refused only because
    of the order; they get one retry after the rest.
    """
    related = set(a for a, _, b in schema.RELATIONS) | set(b for a, _, b in schema.RELATIONS)
    written, deferred, failure = [], [], None
    for item in plan:
        knob, target = item[0], item[1]
        try:
            ctx.write_raw(knob.path, target)
            written.append(item)
        except OSError as e:
            if knob.name in related:
                deferred.append(item)
                continue
            failure = (item, _reason(e))
            break
    for item in deferred:
        if failure:
            break
        try:
            ctx.write_raw(item[0].path, item[1])
            written.append(item)
        except OSError as e:
            failure = (item, _reason(e))
    if not failure:
        for item in written:
            live = read_knob(ctx, item[0])
            if live != item[1]:
                failure = (item, "read back %r: the kernel did not keep the value" % live)
                break
    if not failure:
        return True
    (knob, target, before, origin) = failure[0]
    say("error: writing %r to %s (%s, %s) failed: %s" % (
        target, ctx.show(knob.path), knob.name, origin, failure[1]), err=True)
    lost = []
    for k, _, b, _ in reversed(written):
        try:
            ctx.write_raw(k.path, b)
        except OSError as e:
            lost.append("%s (%s)" % (k.name, _reason(e)))
            continue
        if read_knob(ctx, k) != b:
            lost.append("%s (reads %r, wanted %r)" % (k.name, read_knob(ctx, k), b))
    if lost:
        say("error: could not restore: %s" % ", ".join(lost), err=True)
    else:
        say("restored %d knob(s) written before the failure%s; nothing changed" % (
            len(written), (": " + ", ".join(i[0].name for i in written)) if written else ""),
            err=True)
    return False


def _skip_msg(ctx, setting):
    k = setting.knob
    return "skip %s: not on this kernel (%s, provided by %s); optional in %s" % (
        k.name, ctx.show(k.path), k.provider, setting.origin)


def apply(ctx, profile, selection, owned, say):
    """Apply a validated profile. Returns the exit code (0 or 2)."""
    with Lock(ctx):
        state = load_state(ctx) or {"saved": {}}
        saved = dict(state["saved"])
        plan, missing, unchanged, skipped = [], [], 0, 0
        for s in profile.ordered():
            k = s.knob
            if k.name in owned:
                say("skip %s: owned by %s" % (k.name, owned[k.name]))
                skipped += 1
                continue
            live = read_knob(ctx, k)
            if live is None:
                if s.optional:
                    say(_skip_msg(ctx, s))
                    skipped += 1
                else:
                    missing.append(s)
                continue
            # A bound (">=N") is judged against the value the knob had before
            # mmtune changed it, so that the outcome does not depend on the
            # profile applied before this one.
            base = saved.get(k.name, live)
            target = base if s.op != "=" and satisfied(s, base) else s.value
            if live == target:
                unchanged += 1
                continue
            plan.append((k, target, live, s.origin))
        if missing:
            for s in missing:
                say("error: %s: %s is missing on this kernel (provided by %s) and not "
                    "marked optional (\"?\") in the profile" % (
                        s.origin, ctx.show(s.knob.path), s.knob.provider), err=True)
            say("error: nothing applied", err=True)
            return 2
        # Knobs an earlier apply changed that this profile leaves alone go
        # back to their original values.
        restore = []
        for k in schema.KNOBS:
            if k.name in saved and k.name not in profile.settings and k.name not in owned:
                live = read_knob(ctx, k)
                if live is not None and live != saved[k.name]:
                    restore.append((k, saved[k.name], live, "saved original"))
        if not write_all(ctx, plan + restore, say):
            return 2
        for k, _, before, _ in plan:
            saved.setdefault(k.name, before)
        for k, _, _, _ in restore:
            saved.pop(k.name, None)
        save_state(ctx, {"version": 1, "profile": profile.name, "source": selection.source,
                         "reason": selection.reason, "applied_at": ctx.now(),
                         "files": profile.files, "saved": saved})
        for k, target, before, origin in plan:
            say("set %s = %s (was %s)" % (k.name, target, before))
        for k, target, before, _ in restore:
            say("restored %s = %s (not in this profile)" % (k.name, target))
        say("applied profile %s: %d written, %d already set, %d restored, %d skipped" % (
            profile.name, len(plan), unchanged, len(restore), skipped))
        return 0


def rollback(ctx, owned, say):
    with Lock(ctx):
        state = load_state(ctx)
        if not state or not state["saved"]:
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
            elif live != state["saved"][k.name]:
                plan.append((k, state["saved"][k.name], live, "saved original"))
        if not write_all(ctx, plan, say):
            return 2
        os.unlink(ctx.path(STATE))
        for k, target, before, _ in plan:
            say("restored %s = %s (was %s)" % (k.name, target, before))
        say("rolled back profile %s: %d knob(s) restored" % (state.get("profile"), len(plan)))
        return 0


def knob_rows(ctx, profile, owned):
    """One row per schema knob: wanted, live and state (match, drift...)."""
    rows = []
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
        elif live is None:
            row["state"] = "skipped" if s.optional else "missing"
        else:
            row["state"] = "match" if satisfied(s, live) else "drift"
        rows.append(row)
    return rows


def counters(ctx):
    out = {}
    for group, names in sorted(schema.COUNTERS.items()):
        for n in names:
            text = ctx.read("%s/%s/%s" % (schema.MMTUNE, group, n))
            if text is not None:
                v = text.strip()
                out["mmtune.%s.%s" % (group, n)] = int(v) if v.isdigit() else v
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


