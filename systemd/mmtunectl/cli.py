"""mmtunectl command line. See systemd/README.md for the full manual.

Exit codes: 0 success (verify: live values match), 1 drift (verify only),
2 error (bad profile or rules, failed write, nothing applied), 4 not root.
"""

import argparse
import json
import os
import sys

from . import VERSION, engine, recommend, schema, tuned
from .context import Context
from .profile import ConfigError, Loader, describe
from .recommend import Selection

EXIT_OK, EXIT_DRIFT, EXIT_ERROR, EXIT_NOT_ROOT = 0, 1, 2, 4
STATUS_SCHEMA = 1


def say(msg, err=False):
    stream = sys.stderr if err else sys.stdout
    stream.write(msg + "\n")


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
        say("%-40s %-50s %s" % (k.name, ctx.show(k.path), describe(k)))
    return EXIT_OK


def cmd_show(ctx, args):
    prof = Loader(ctx).load(args.profile)
    say("profile %s: %s" % (prof.name, prof.summary))
    for f in prof.files:
        say("file %s" % f)
    for s in prof.ordered():
        say("%-40s %s%-14s # %s" % (s.knob.name, "?" if s.optional else " ",
                                     s.wanted(), s.origin))
    return EXIT_OK


def cmd_recommend(ctx, args):
    sel = recommend.select(ctx, use_overrides=not args.no_override)
    say(sel.name)
    say("reason: %s" % sel.reason)
    if args.verbose:
        facts = recommend.Facts(ctx).describe()
        say("facts: " + ", ".join("%s=%s" % (k, facts[k]) for k in sorted(facts)))
    return EXIT_OK


def cmd_apply(ctx, args):
    if args.profile and args.auto:
        say("mmtunectl apply: give a profile or --auto, not both", err=True)
        return EXIT_ERROR
    if not need_root(ctx, "apply"):
        return EXIT_NOT_ROOT
    if args.profile:
        sel = Selection(args.profile, "explicit", "mmtunectl apply " + args.profile)
    else:
        sel = recommend.select(ctx)
    say("profile %s (%s)" % (sel.name, sel.reason))
    prof = Loader(ctx).load(sel.name)
    return engine.apply(ctx, prof, sel, tuned.owned(ctx), say)


def cmd_verify(ctx, args):
    sel, state = active(ctx)
    prof = Loader(ctx).load(sel.name)
    rows = engine.knob_rows(ctx, prof, tuned.owned(ctx))
    counts = {}
    for r in rows:
        counts[r["state"]] = counts.get(r["state"], 0) + 1
        if r["state"] in ("drift", "missing"):
            say("%s: %s: wanted %s, live %s (%s)" % (
                r["state"], r["name"], r["wanted"],
                r["live"] if r["live"] is not None else "(no such file)", r["origin"]))
    bad = counts.get("drift", 0) + counts.get("missing", 0)
    # A profile picked automatically must still be the one the overrides and
    # rules pick now (e.g. config management changed /etc/mmtune/profile).
    if state and sel.source != "explicit":
        now = recommend.select(ctx)
        if now.name != sel.name:
            say("drift: profile: applied %s, now selected %s (%s); run mmtunectl apply --auto"
                % (sel.name, now.name, now.reason))
            bad += 1
    say("verify: profile %s%s: %d match, %d differ, %d skipped, %d owned by tuned" % (
        prof.name, "" if state else " (not applied)", counts.get("match", 0), bad,
        counts.get("skipped", 0), counts.get("tuned", 0)))
    return EXIT_DRIFT if bad else EXIT_OK


def status_doc(ctx):
    """The --json document. Its shape is a stable interface: see README."""
    errors = []
    doc = {"schema_version": STATUS_SCHEMA, "profile": None, "applied": None,
           "module": engine.module_info(ctx), "tuned": {"active_profile": tuned.active_profile(ctx)},
           "knobs": [], "counters": engine.counters(ctx), "errors": errors}
    prof = None
    try:
        sel, state = active(ctx)
        doc["profile"] = {"name": sel.name, "source": sel.source, "reason": sel.reason,
                          "summary": None}
        if state:
            doc["applied"] = {"time": state.get("applied_at"),
                              "saved_knobs": sorted(state.get("saved", {}))}
        prof = Loader(ctx).load(sel.name)
        doc["profile"]["summary"] = prof.summary
    except (ConfigError, engine.StateError) as e:
        errors.extend(getattr(e, "errors", [str(e)]))
    doc["knobs"] = engine.knob_rows(ctx, prof, tuned.owned(ctx))
    return doc


def cmd_status(ctx, args):
    doc = status_doc(ctx)
    if args.json:
        sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True) + "\n")
        return EXIT_ERROR if doc["errors"] else EXIT_OK
    p = doc["profile"]
    if p:
        applied = "applied %s" % doc["applied"]["time"] if doc["applied"] else "not applied"
        say("profile: %s (%s; %s: %s)" % (p["name"], applied, p["source"], p["reason"]))
    m = doc["module"]
    if m["loaded"]:
        say("module: mmtune %s, abi %s, features: %s" % (
            m["version"], m["abi_version"],
            ", ".join("%s %s" % kv for kv in sorted(m["features"].items())) or "-"))
    else:
        say("module: mmtune not loaded")
    if doc["tuned"]["active_profile"]:
        say("tuned: active profile %s" % doc["tuned"]["active_profile"])
    say("%-40s %-14s %-14s %s" % ("knob", "wanted", "live", "state"))
    for r in doc["knobs"]:
        if r["state"] == "unmanaged" and r["live"] is None:
            continue
        say("%-40s %-14s %-14s %s" % (r["name"], r["wanted"] or "-",
                                      r["live"] if r["live"] is not None else "-", r["state"]))
    if doc["counters"]:
        say("counters:")
        for k in sorted(doc["counters"]):
            say("  %-38s %s" % (k, doc["counters"][k]))
    for e in doc["errors"]:
        say("error: " + e, err=True)
    return EXIT_ERROR if doc["errors"] else EXIT_OK


def cmd_rollback(ctx, args):
    if not need_root(ctx, "rollback"):
        return EXIT_NOT_ROOT
    return engine.rollback(ctx, tuned.owned(ctx), say)


def parser():
    p = argparse.ArgumentParser(prog="mmtunectl",
                                description="host-class memory-management profiles for mmtune")
    p.add_argument("--root", default=os.environ.get("MMTUNE_ROOT", "/"),
                   help="act on the tree under DIR (tests; default / or $MMTUNE_ROOT)")
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
    s = sub.add_parser("apply", help="apply PROFILE, or the recommended one (--auto)")
    s.add_argument("profile", nargs="?")
    s.add_argument("--auto", action="store_true")
    sub.add_parser("verify", help="compare live values with the profile: exit 0 match, 1 drift, 2 error")
    s = sub.add_parser("status", help="active profile, why, every knob, counters")
    s.add_argument("--json", action="store_true")
    sub.add_parser("rollback", help="restore the values saved before mmtune changed them")
    return p


COMMANDS = {"list": cmd_list, "knobs": cmd_knobs, "show": cmd_show, "recommend": cmd_recommend,
            "apply": cmd_apply, "verify": cmd_verify, "status": cmd_status,
            "rollback": cmd_rollback}


def main(argv=None, vendor="usr/lib/mmtune", **ctx_args):
    args = parser().parse_args(argv)
    ctx = Context(root=args.root, vendor=vendor, **ctx_args)
    try:
        return COMMANDS[args.cmd](ctx, args)
    except ConfigError as e:
        for line in e.errors:
            say("error: " + line, err=True)
        if args.cmd in ("apply",):
            say("error: nothing applied", err=True)
        return EXIT_ERROR
    except engine.StateError as e:
        say("error: %s" % e, err=True)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_OK
    except PermissionError as e:
        say("error: %s: %s (are you root?)" % (e.filename, e.strerror), err=True)
        return EXIT_NOT_ROOT
    except OSError as e:
        say("error: %s" % e, err=True)
        return EXIT_ERROR


if __name__ == "__main__":
    sys.exit(main())
