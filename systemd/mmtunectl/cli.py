"""mmtunectl command line. See systemd/README.md and mmtunectl(8).

Exit statuses:
  0  success; verify/status: the kernel holds every value of the profile;
     diff: nothing would change; check: the file is valid
  1  drift (verify, status); diff: apply would change something
  2  error: bad or unreadable profile, rules, override or file (file:line),
     a corrupt state file, a write the kernel refused for a required knob
     (everything restored), bad usage
  3  verify/status: mmtune.ko expected but not loaded (see health.py)
  4  a command lacked a permission it needs: apply/rollback run by a
     non-root user, or any command denied (EACCES/EPERM) a file it reads or
     writes for itself, e.g. the state file (main() maps PermissionError)
  5  verify/status: kernel without mmtune hooks (see health.py)
  6  apply/rollback: another process held /run/mmtune/lock past --lock-timeout
  7  internal error: a bug in mmtunectl (traceback on stderr); never a
     verdict on the host. Recorded in /run/mmtune/last-run.json for the
     metrics (status --prometheus --output writes a file saying so even
     when it fails itself).
"""

import argparse
import json
import os
import re
import sys
import traceback

from . import VERSION, cgroups, engine, health, journal, metrics, recommend, schema, tuned
from .context import Context
from .profile import ConfigError, Loader, describe
from .recommend import Selection

EXIT_OK, EXIT_DRIFT, EXIT_ERROR, EXIT_NOT_LOADED, EXIT_NOT_ROOT, EXIT_NO_HOOKS, \
    EXIT_LOCKED, EXIT_INTERNAL = 0, 1, 2, 3, 4, 5, 6, 7
STATUS_SCHEMA = 1


def _fd(stream):
    try:
        return stream.fileno()
    except (OSError, ValueError, AttributeError):
        return -1       # a test's capture buffer


def write(text, stream=None):
    """Write text to stdout (or stream). A reader that went away
    (`mmtunectl knobs | head`) is no error: the rest of the output goes
    to /dev/null, quietly, and the command completes (an apply is never
    cut short by its output)."""
    stream = stream or sys.stdout
    try:
        stream.write(text)
        if stream is sys.stdout:
            stream.flush()
    except BrokenPipeError:
        fd = _fd(stream)
        if fd >= 0:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)


def say(msg, err=False, prio=None):
    """One line to stdout (info) or stderr (error, or the priority given).
    Prefixed with its syslog priority when the stream is the journal."""
    stream = sys.stderr if err else sys.stdout
    if prio is None:
        prio = journal.ERR if err else journal.INFO
    if journal.stream_is_journal(_fd(stream)):
        msg = "<%d>%s" % (prio, msg)
    write(msg + "\n", stream)


def need_root(ctx, cmd):
    if ctx.euid != 0:
        say("mmtunectl %s: writing kernel knobs needs root (running as uid %d); "
            "try: sudo mmtunectl %s" % (cmd, ctx.euid, cmd), err=True)
        return False
    return True


def active(ctx):
    """(Selection, state): the applied profile if any, else the one --auto picks."""
    state = engine.load_state(ctx)
    if state and state.get("profile"):
        return Selection(state["profile"], state.get("source", "explicit"),
                         state.get("reason", "")), state
    return recommend.select(ctx), None


def cmd_list(ctx, args):
    names = Loader(ctx).names()
    try:
        current = active(ctx)[0].name
    except (ConfigError, engine.StateError):
        current = None
    for name in sorted(names):
        rel, layer, masked = names[name]
        mark = "*" if name == current else " "
        if masked:
            say("%s %-20s %-8s masked by %s" % (mark, name, "masked", ctx.show(rel)))
            continue
        summary = ""
        try:
            summary = Loader(ctx).load(name).summary
        except ConfigError as e:
            summary = "(broken: %s)" % e.errors[0]
        say("%s %-20s %-8s %s" % (mark, name, layer, summary))
    return EXIT_OK


def cmd_knobs(ctx, args):
    """The schema: every key a profile may set, with its file and values."""
    for k in schema.KNOBS:
        # The kernel lines of a knob that not every line has.
        lines = " (%s only)" % " ".join(k.lines) if k.lines and set(k.lines) != set(
            schema.LINES) else ""
        say("%-40s %-50s %s%s" % (k.name, ctx.show(k.path), describe(k), lines))
    return EXIT_OK


def cmd_show(ctx, args):
    prof = Loader(ctx).load(args.profile)
    say("profile %s: %s" % (prof.name, prof.summary))
    for f in prof.files:
        say("file %s" % f)
    for s in prof.ordered():
        say("%-40s %s%-14s # %s" % (s.knob.name, "?" if s.optional else " ",
                                     s.wanted(), s.origin))
    for sec in prof.cgroups.values():
        say("%s" % sec.header())
        for k, (v, origin) in sec.keys.items():
            say("  %-38s %-15s # %s" % (k, v, origin))
    return EXIT_OK


def cmd_recommend(ctx, args):
    if args.reset:
        if not need_root(ctx, "recommend --reset"):
            return EXIT_NOT_ROOT
        name, _ = recommend.recorded(ctx, [])
        try:
            # Whatever it holds: an unusable record is removed too.
            os.unlink(ctx.path(recommend.RECORD))
            say("forgot the recorded pick %s; the next apply --auto picks by the rules" % (
                name or "(an unusable %s)" % ctx.show(recommend.RECORD)))
        except FileNotFoundError:
            say("no recorded pick")
    # What the rules pick now; the record is what apply --auto keeps using.
    sel = recommend.select(ctx, use_overrides=not args.no_override, use_record=False)
    say(sel.name)
    say("reason: %s" % sel.reason)
    notes = []
    name, _ = recommend.recorded(ctx, notes)
    for n in notes:
        say(n, prio=journal.WARNING)
    if name and name != sel.name and sel.source in ("recommend", "default"):
        say("recorded: %s (apply --auto keeps it; `mmtunectl recommend --reset` to pick again)"
            % name)
    if args.verbose:
        facts = recommend.Facts(ctx).describe()
        say("facts: " + ", ".join("%s=%s" % (k, facts[k]) for k in sorted(facts)))
    return EXIT_OK


def _selection(ctx, profile):
    if profile:
        return Selection(profile, "explicit", "mmtunectl apply " + profile)
    return recommend.select(ctx)


def _preview(ctx, prof, owned, verb):
    """The plan of applying prof, printed knob by knob; nothing is written."""
    state = engine.load_state(ctx) or {"saved": {}}
    plan = engine.make_plan(ctx, prof, owned, dict(state["saved"]))
    plan.report(ctx, say)
    plan.cgroups = cgroups.make_plan(ctx, prof, cgroups.saved_of(state))
    plan.cgroups.report(say)
    if plan.missing or plan.cgroups.missing:
        engine.missing_error(ctx, plan, say)
        plan.cgroups.missing_errors(ctx, say)
        return plan, EXIT_ERROR
    for c in plan.writes:
        say("%s %s: %s -> %s (%s)" % (verb, c.knob.name, engine.was(c), c.target, c.origin))
    for c in plan.restores:
        say("%s %s: %s -> %s (saved original: not in profile %s)" % (
            verb, c.knob.name, engine.was(c), c.target, prof.name))
    for path, keys, before, origin in plan.cgroups.writes:
        say("%s cgroup %s: %s -> %s (%s)" % (verb, path, cgroups.describe(before),
                                              cgroups.describe(keys), origin))
    if plan.cgroups.enable:
        say("%s mmtune.cgroup_policy.enabled: %s -> %s (the profile's cgroup sections)"
            % ((verb,) + plan.cgroups.enable))
    for s, value, where in engine.sysctl_d_overrides(ctx, prof):
        if s.knob.name not in owned:
            say(engine.sysctl_d_msg(s, value, where))
    return plan, EXIT_OK


def cmd_apply(ctx, args):
    if args.profile and args.auto:
        say("mmtunectl apply: give a profile or --auto, not both", err=True)
        return EXIT_ERROR
    if not args.dry_run and not need_root(ctx, "apply"):
        return EXIT_NOT_ROOT
    sel = _selection(ctx, args.profile)
    for n in sel.notes:
        say(n, prio=journal.WARNING)
    say("profile %s (%s)" % (sel.name, sel.reason))
    prof = Loader(ctx).load(sel.name)
    if args.dry_run:
        plan, rc = _preview(ctx, prof, tuned.owned(ctx), "would set")
        if rc:
            say("error: nothing would be applied", err=True)
            return rc
        say("dry run: profile %s: %d would be written, %d already set, %d restored, "
            "%d skipped%s; nothing written" % (prof.name, len(plan.writes), plan.unchanged,
                                               len(plan.restores), plan.skipped(),
                                               plan.cgroups.summary()))
        return EXIT_OK
    rc = engine.apply(ctx, prof, sel, tuned.owned(ctx), say, reload=args.reload)
    if rc == EXIT_OK and sel.source in ("recommend", "default"):
        recommend.record(ctx, sel)
    return rc


def _dropin_name(path):
    name = os.path.basename(path)
    return name if name.endswith(".conf") else name + ".conf"


def cmd_diff(ctx, args):
    for f in args.dropin:
        if not os.path.isfile(f):
            say("error: %s: no such file" % f, err=True)
            return EXIT_ERROR
    sel = _selection(ctx, args.profile)
    for f in args.dropin:
        # It replaces the drop-in of the same name that apply would read
        # (the highest layer that has one), else it is a new one in /etc.
        rels = ["%s/profiles/%s.conf.d/%s" % (d, sel.name, _dropin_name(f))
                for _, d in ctx.layers()]
        rel = ([r for r in rels if ctx.exists(r)] + [rels[1]])[0]
        ctx.overlay[os.path.normpath(rel)] = os.path.abspath(f)
    prof = Loader(ctx).load(sel.name)
    plan, rc = _preview(ctx, prof, tuned.owned(ctx), "change")
    if rc:
        return rc
    n = len(plan.changes())
    m = len(plan.cgroups.writes) + bool(plan.cgroups.enable)
    say("diff: profile %s (%s): %s" % (
        prof.name, sel.reason, "%d knob(s)%s would change" % (
            n, " and %d cgroup setting(s)" % m if m else "") if n + m
        else "no change, the kernel holds it"))
    n += m
    return EXIT_DRIFT if n else EXIT_OK


def place(ctx, rel):
    """(kind, profile name) of a file mmtunectl reads at rel: "profile",
    "dropin", "override", "rules"; (None, None) for any other path."""
    rel = os.path.normpath(rel)
    if rel in ("etc/mmtune/profile", "run/mmtune/profile"):
        return "override", None
    for _, d in ctx.layers():
        d = re.escape(d)
        for kind, rx in (("rules", d + r"/recommend\.rules(?:\.d/[^/]+\.rules)?$"),
                         ("profile", d + r"/profiles/([^/]+)\.conf$"),
                         ("dropin", d + r"/profiles/([^/]+)\.conf\.d/[^/]+\.conf$")):
            m = re.match(rx, rel)
            if m:
                return kind, (m.group(1) if m.groups() else None)
    return None, None


def _check_alone(ctx, path):
    errors, prof = Loader(ctx).check_file(path)
    for e in errors:
        say("error: " + e, err=True)
    if not errors:
        # Valid alone is not valid where it goes: say how to check that.
        say("%s: ok, %d knob(s), checked on its own (--profile NAME or FILE=PATH checks it "
            "in the profiles that read it)" % (path, len(prof.settings)))
    return EXIT_ERROR if errors else EXIT_OK


def cmd_check(ctx, args):
    """Validate files in the place they are for: FILE=PATH (or FILE at its
    place, or with --profile a drop-in of that profile) is read instead of
    PATH, and every profile that reads it, the profile --profile names and
    the one apply --auto would pick are resolved in full, with every
    cross-knob rule. A file that is none of these is checked on its own."""
    rc, placed = EXIT_OK, []
    for arg in args.file:
        src, sep, dest = arg.partition("=")
        if not os.path.lexists(src):
            say("error: %s: cannot read: %s" % (src, os.strerror(2)), err=True)
            rc = EXIT_ERROR
            continue
        rel = ctx.rel_of(dest if sep else src)
        if not sep and place(ctx, rel)[0] is None and src.endswith(".rules"):
            # A rules file anywhere: checked as an admin rules drop-in.
            rel = "etc/mmtune/recommend.rules.d/" + os.path.basename(src)
        elif not sep and place(ctx, rel)[0] is None:
            if not args.profile:
                rc = max(rc, _check_alone(ctx, src))
                continue
            rel = "etc/mmtune/profiles/%s.conf.d/%s" % (args.profile, _dropin_name(src))
        kind, name = place(ctx, rel)
        if kind is None:
            say("error: %s: mmtunectl reads no such file (a profile, drop-in, override or "
                "rules file under /run/mmtune, /etc/mmtune or /%s)" % (dest, ctx.vendor),
                err=True)
            rc = EXIT_ERROR
            continue
        if os.path.abspath(src) != os.path.abspath(ctx.path(rel)):
            ctx.overlay[os.path.normpath(rel)] = os.path.abspath(src)
        placed.append((src, rel, kind, name))
    if not placed and not args.profile:
        return rc
    errors, names = [], set(n for _, _, _, n in placed if n)
    if args.profile:
        names.add(args.profile)
    try:
        if any(kind == "rules" for _, _, kind, _ in placed):
            recommend.match(ctx)
        sel = recommend.select(ctx)
        names.add(sel.name)
        say("selected profile: %s (%s)" % (sel.name, sel.reason))
    except ConfigError as e:
        errors.extend(e.errors)
    loader = Loader(ctx)
    shown = set(ctx.show(rel) for _, rel, _, _ in placed)
    for name in sorted(set(loader.names()) | names):
        prof, errs = loader.resolve(name)
        if name in names or shown & set(prof.files):
            errors.extend(e for e in errs if e not in errors)
            if not errs:
                say("profile %s: ok, %d knob(s)%s" % (
                    name, len(prof.settings), ", %d cgroup section(s)" % len(prof.cgroups)
                    if prof.cgroups else ""))
    for e in errors:
        say("error: " + e, err=True)
    return EXIT_ERROR if errors else rc


def cmd_verify(ctx, args):
    r = health.evaluate(ctx)
    for e in r.errors:
        say("error: " + e, err=True)
    for n in r.notes():
        say(n, prio=journal.WARNING)
    for _, msg in r.problems:
        say(msg)
    counts, cg = {}, {}
    for rows, n in ((r.rows, counts), (r.cgroups, cg)):
        for row in rows:
            n[row["state"]] = n.get(row["state"], 0) + 1
    if r.profile:
        bad = len([p for p in r.problems if p[0] == health.DRIFT])
        say("verify: profile %s%s: %d match, %d differ, %d skipped, %d owned by tuned%s" % (
            r.profile.name, "" if r.state else " (not applied)", counts.get("match", 0), bad,
            counts.get("skipped", 0), counts.get("tuned", 0),
            "; cgroups: %d match, %d differ, %d skipped" % (
                cg.get("match", 0), cg.get("drift", 0) + cg.get("missing", 0),
                cg.get("skipped", 0)) if cg else ""))
    return r.status()


def status_doc(ctx, r):
    """The --json document. Its shape is a stable interface: see README."""
    code = r.status()
    doc = {"schema_version": STATUS_SCHEMA, "profile": None, "applied": None,
           "module": r.module, "tuned": {"active_profile": tuned.active_profile(ctx)},
           "knobs": r.rows, "counters": engine.counters(ctx), "errors": list(r.errors),
           "ok": code == EXIT_OK, "health": health.HEALTH[code], "exit_status": code,
           "problems": [m for _, m in r.problems],
           "selected_profile": r.selected.name if r.selected else None,
           "applied_profile": (r.state or {}).get("profile"),
           "module_expected": r.module_expected, "kernel_hooks": r.hooks,
           "hook_kernels": r.hook_kernels,
           "last_apply": engine.load_last_apply(ctx), "absent_features": {},
           "recommended_profile": r.recommended, "recorded_profile": r.recorded,
           "kernel": {"release": r.release, "line": r.line,
                      "mmtune_line": r.line in schema.LINES},
           "other_line_knobs": [row["name"] for row in r.rows if row.get("kernel_lines")],
           "size_counters": engine.size_counters(ctx),
           "cgroups": r.cgroups, "cgroup_stats": cgroups.read_stats(ctx),
           "sysctl_d_overridden": [
               {"knob": s.knob.name, "value": v, "origin": w, "wanted": s.wanted()}
               for s, v, w in engine.sysctl_d_overrides(ctx, r.profile)
               if s.knob.name not in r.owned]}
    for row in r.rows:
        f = row.get("absent_feature")
        if f:
            path, _, needs = schema.FEATURES[f]
            doc["absent_features"].setdefault(f, {"path": ctx.show(path), "needs": needs,
                                                  "knobs": []})["knobs"].append(row["name"])
    if r.selection:
        doc["profile"] = {"name": r.selection.name, "source": r.selection.source,
                          "reason": r.selection.reason,
                          "summary": r.profile.summary if r.profile else None}
    if r.state:
        doc["applied"] = {"time": r.state.get("applied_at"),
                          "saved_knobs": sorted(r.state.get("saved", {})),
                          "refused_knobs": sorted(r.state.get("refused", []))}
    return doc


# The kernel's per-size counters status shows, in this order (every one
# is in status --json and the metrics).
SIZE_COLUMNS = ("anon_fault_alloc", "anon_fault_fallback", "swpout", "swpout_fallback",
                "zswpout", "split", "nr_anon")


def size_table(sizes):
    """Lines of the per-size counter table ("-": the size has no such file,
    e.g. 8kB is shmem only, zswpout needs the 6.12 series)."""
    cols = [c for c in SIZE_COLUMNS if any(c in st for st in sizes.values())]
    if not cols:
        return []
    rows = [["size"] + list(cols)] + [
        [size] + [str(st[c]) if c in st else "-" for c in cols] for size, st in sizes.items()]
    width = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    out = ["per size (/sys/kernel/mm/transparent_hugepage/hugepages-<size>kB/stats):"]
    for r in rows:
        out.append("  " + "  ".join(v.ljust(w) for v, w in zip(r, width)).rstrip())
    return out


def cmd_status(ctx, args):
    if args.output and not args.prometheus:
        say("mmtunectl status: --output goes with --prometheus", err=True)
        return EXIT_ERROR
    r = health.evaluate(ctx)
    if args.prometheus:
        text = metrics.render(ctx, r)
        if args.output:
            try:
                metrics.write_atomic(args.output, text)
            except OSError as e:
                say("error: cannot write %s: %s" % (args.output, e.strerror or e), err=True)
                return EXIT_ERROR
        else:
            write(text)
        # The health is in the metrics; a timer must not fail every minute.
        return EXIT_OK
    doc = status_doc(ctx, r)
    if args.json:
        write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return doc["exit_status"]
    p = doc["profile"]
    if p:
        applied = "applied %s" % doc["applied"]["time"] if doc["applied"] else "not applied"
        say("profile: %s (%s; %s: %s)" % (p["name"], applied, p["source"], p["reason"]))
    if doc["selected_profile"] and p and doc["selected_profile"] != p["name"]:
        say("selected: %s (the overrides and rules pick it now)" % doc["selected_profile"])
    if doc["recorded_profile"] and doc["recommended_profile"] not in (None, doc["recorded_profile"]):
        say("recommend: the rules pick %s now; the recorded pick %s is kept "
            "(mmtunectl recommend --reset to pick again)" % (
                doc["recommended_profile"], doc["recorded_profile"]))
    m = doc["module"]
    if m["loaded"]:
        say("module: mmtune %s, abi %s, features: %s" % (
            m["version"], m["abi_version"],
            ", ".join("%s %s" % kv for kv in sorted(m["features"].items())) or "-"))
    else:
        say("module: mmtune not loaded (kernel hooks: %s)" % doc["kernel_hooks"])
        if doc["hook_kernels"]:
            say("kernel: installed with the mmtune hooks, not running: %s"
                % ", ".join(doc["hook_kernels"]))
    kern = doc["kernel"]
    say("kernel: %s, %s" % (
        kern["release"] or "release unknown",
        "line %s" % kern["line"] if kern["mmtune_line"]
        else "not a kernel line of mmtune (%s)" % ", ".join(schema.LINES)))
    if doc["other_line_knobs"]:
        others = sorted(set(l for row in doc["knobs"] for l in row.get("kernel_lines", [])))
        say("kernel: line %s: %d knob(s) of the profile are only on %s, skipped" % (
            kern["line"], len(doc["other_line_knobs"]), " and ".join(others)))
    for f, a in sorted(doc["absent_features"].items()):
        say("kernel: no %s (%s absent; needs %s): %d knob(s) of the profile skipped" % (
            f, a["path"], a["needs"], len(a["knobs"])))
    if doc["tuned"]["active_profile"]:
        say("tuned: active profile %s" % doc["tuned"]["active_profile"])
    say("%-40s %-14s %-14s %s" % ("knob", "wanted", "live", "state"))
    for row in doc["knobs"]:
        if row["state"] == "unmanaged" and row["live"] is None:
            continue
        say("%-40s %-14s %-14s %s" % (row["name"], row["wanted"] or "-",
                                      row["live"] if row["live"] is not None else "-",
                                      row["state"] + (" (%s only)" % " ".join(row["kernel_lines"])
                                                      if row.get("kernel_lines") else "")))
    if doc["cgroups"]:
        say("cgroups (state, cgroup, wanted entry):")
    for row in doc["cgroups"]:
        say("  %-8s %s %s%s" % (
            row["state"], row["cgroup"] or row["section"] or "cgroup_policy",
            row["wanted"] or "-", " (no %s)" % row["absent_feature"]
            if row.get("absent_feature") else ", live: " + row["live"]
            if row["state"] == "drift" else ""))
    for path, stats in sorted(doc["cgroup_stats"].items()):
        say("counters of cgroup %s: %s" % (path, " ".join(
            "%s_%s=%d" % s for s in stats)))
    if doc["counters"]:
        say("counters:")
        for k in sorted(doc["counters"]):
            say("  %-38s %s" % (k, doc["counters"][k]))
    for line in size_table(doc["size_counters"]):
        say(line)
    for o in doc["sysctl_d_overridden"]:
        say("note: %s: %s sets %s at boot; the profile's %s wins (mmtune.service runs after "
            "systemd-sysctl.service)" % (o["knob"], o["origin"], o["value"], o["wanted"]))
    for msg in r.notes() + doc["problems"]:
        say(msg)
    say("health: %s (exit %d)" % (doc["health"], doc["exit_status"]))
    for e in doc["errors"]:
        say("error: " + e, err=True)
    return doc["exit_status"]


def cmd_rollback(ctx, args):
    if not need_root(ctx, "rollback"):
        return EXIT_NOT_ROOT
    return engine.rollback(ctx, tuned.owned(ctx), say)


def _seconds(text):
    v = float(text)
    if not 0 <= v <= 86400:
        raise argparse.ArgumentTypeError("%s is not 0..86400 seconds" % text)
    return v


def parser():
    p = argparse.ArgumentParser(prog="mmtunectl",
                                description="host-class memory-management profiles for mmtune")
    p.add_argument("--root", default="/", metavar="DIR",
                   help="act on the tree under DIR instead of / (an image, a test tree)")
    p.add_argument("--lock-timeout", type=_seconds, default=engine.DEFAULT_LOCK_TIMEOUT,
                   metavar="SECONDS",
                   help="apply/rollback: give up (exit 6) when another run holds the lock "
                        "this long (default %(default)s)")
    p.add_argument("--version", action="version", version="mmtunectl " + VERSION)
    sub = p.add_subparsers(dest="cmd", metavar="COMMAND")
    sub.required = True
    sub.add_parser("list", help="list profiles (* = active)")
    sub.add_parser("knobs", help="every knob a profile may set: section.key, file, values")
    s = sub.add_parser("show", help="show a resolved profile and where each value comes from")
    s.add_argument("profile")
    s = sub.add_parser("recommend", help="the profile apply --auto picks, and why")
    s.add_argument("--no-override", action="store_true", help="rules only, ignore overrides")
    s.add_argument("-v", "--verbose", action="store_true", help="also print the host facts")
    s.add_argument("--reset", action="store_true",
                   help="forget the pick the first apply --auto recorded (root)")
    s = sub.add_parser("apply", help="apply PROFILE, or the recommended one (--auto)")
    s.add_argument("profile", nargs="?")
    s.add_argument("--auto", action="store_true")
    s.add_argument("--dry-run", action="store_true",
                   help="print what would change, knob by knob; write nothing")
    s.add_argument("--reload", action="store_true",
                   help="re-apply in place (mmtune.service ExecReload): logged as re-apply")
    s = sub.add_parser("diff", help="what apply [PROFILE] would change: exit 0 none, 1 some")
    s.add_argument("profile", nargs="?")
    s.add_argument("--dropin", action="append", default=[], metavar="FILE",
                   help="read FILE in place of the profile's drop-in of the same name "
                        "(a change not deployed yet)")
    s = sub.add_parser("check", help="validate files where they would be read: exit 0 valid, "
                                     "2 errors (file:line)")
    s.add_argument("--profile", metavar="NAME",
                   help="also resolve profile NAME; a FILE at no known place is its drop-in")
    s.add_argument("file", nargs="+", metavar="FILE[=PATH]",
                   help="FILE, read in place of PATH (a profile, drop-in, override or rules file)")
    sub.add_parser("verify", help="compare live values with the profile: exit 0 match, "
                                  "1 drift, 2 error, 3 module not loaded, 5 no hooks")
    s = sub.add_parser("status", help="active profile, why, every knob, counters, health")
    g = s.add_mutually_exclusive_group()
    g.add_argument("--json", action="store_true")
    g.add_argument("--prometheus", action="store_true",
                   help="node_exporter textfile format")
    s.add_argument("--output", metavar="FILE",
                   help="with --prometheus: write FILE atomically (temporary file, rename)")
    sub.add_parser("rollback", help="restore the values saved before mmtune changed them")
    return p


COMMANDS = {"list": cmd_list, "knobs": cmd_knobs, "show": cmd_show, "recommend": cmd_recommend,
            "apply": cmd_apply, "diff": cmd_diff, "check": cmd_check, "verify": cmd_verify,
            "status": cmd_status, "rollback": cmd_rollback}


def main(argv=None, vendor="usr/lib/mmtune", **ctx_args):
    """The installed entry script calls main(vendor=...): the root comes
    from --root only. Tests pass root=, detect_virt=, euid=... here."""
    args = parser().parse_args(argv)
    ctx_args.setdefault("root", args.root)
    ctx = Context(vendor=vendor, lock_timeout=args.lock_timeout, **ctx_args)
    rc = _run(ctx, args)
    if args.cmd in ("apply", "rollback") and not getattr(args, "dry_run", False) \
            and ctx.euid == 0:
        metrics.save_last_run(ctx, args.cmd, rc)
    return rc


class BrokenInstall(Exception):
    pass


def _run(ctx, args):
    try:
        if schema.TABLE_ERROR:
            raise BrokenInstall("mmtunectl's table of mmtune.ko's files is broken: %s; "
                                "reinstall the mmtune package" % schema.TABLE_ERROR)
        return COMMANDS[args.cmd](ctx, args)
    except ConfigError as e:
        for line in e.errors:
            say("error: " + line, err=True)
        if args.cmd in ("apply",):
            say("error: nothing applied", err=True)
            if not getattr(args, "dry_run", False):
                engine.record(ctx, "apply", getattr(args, "profile", None) or "(auto)", False,
                              [], error="; ".join(e.errors[:3]), reload=args.reload)
        return EXIT_ERROR
    except engine.StateError as e:
        say("error: %s" % e, err=True)
        return EXIT_ERROR
    except engine.LockTimeout as e:
        say("error: %s" % e, err=True)
        return EXIT_LOCKED
    except PermissionError as e:
        say("error: %s: %s (are you root?)" % (e.filename, e.strerror), err=True)
        return EXIT_NOT_ROOT
    except OSError as e:
        say("error: %s" % e, err=True)
        return EXIT_ERROR
    except Exception as e:      # a bug: its own status, never "drift" (1)
        if isinstance(e, BrokenInstall):
            say("error: %s (exit %d)" % (e, EXIT_INTERNAL), err=True)
        else:
            traceback.print_exc()
            say("error: internal error in mmtunectl %s: %s: %s (exit %d; please report it)"
                % (args.cmd, type(e).__name__, e, EXIT_INTERNAL), err=True)
        if args.cmd == "status" and args.output:
            try:
                metrics.write_atomic(args.output, metrics.render_internal_error(ctx))
            except OSError:
                pass
        return EXIT_INTERNAL


if __name__ == "__main__":
    sys.exit(main())
