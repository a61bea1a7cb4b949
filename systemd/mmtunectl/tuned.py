"""Coexistence with tuned: the knobs tuned owns are left to tuned.

When tuned is installed and has an active profile (/etc/tuned/active_profile),
every knob that profile sets (its [sysctl] keys, [vm] transparent_hugepages,
[sysfs] paths, following include=) is skipped by apply and verify, with a
message naming the tuned profile. Two owners never write the same knob, and
tuned keeps working for everything else (CPU, disks, network).
systemd/README.md, "tuned", says why this and not Conflicts= or a tuned include.
"""

import fnmatch
import glob
import os
import re

from . import schema, sysctld

PROFILE_DIRS = ("etc/tuned/profiles", "etc/tuned", "usr/lib/tuned/profiles", "usr/lib/tuned")
THP_VM_KEYS = {"transparent_hugepages": "thp.enabled", "transparent_hugepage": "thp.enabled",
               "transparent_hugepage.defrag": "thp.defrag"}
# tuned reads profiles with configparser, inline_comment_prefixes=("#")
# (tuned/profiles/loader.py): "#" starts a comment at the start of a line or
# after whitespace, not inside a word ("a#b" is the value "a#b"). Releases
# from before that used configobj, which cut "a#b" too; whitespace then "#"
# is a comment for both.
INLINE_COMMENT = re.compile(r"\s+#.*$")
# tuned splits include= at "," and ";" (whitespace around them dropped).
INCLUDE_SEP = re.compile(r"\s*[,;]\s*")
EXPR = re.compile(r"\$\{([^}]*)\}")


def _parse(text):
    """{section: {key: value}}; lenient, since the file is tuned's."""
    out, sec = {}, None
    for line in text.splitlines():
        line = INLINE_COMMENT.sub("", line).strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            sec = out.setdefault(line[1:-1].strip(), {})
        elif "=" in line and sec is not None:
            k, v = line.split("=", 1)
            sec[k.strip()] = v.strip()
    return out


def _find(ctx, name, skip=()):
    """(rel, text) of tuned profile name, or (None, None); a file in skip
    (loaded already) is passed over, as tuned's Locator.get_config() does,
    so that /etc/tuned/NAME can include the NAME below it."""
    for d in PROFILE_DIRS:
        rel = "%s/%s/tuned.conf" % (d, os.path.basename(name))
        text = None if rel in skip else ctx.read_config(rel)
        if text is not None:
            return rel, text
    return None, None


class Unresolved(Exception):
    pass


def _expand(ctx, value, variables, facts):
    """The include= value after tuned's expansion: [variables] (${name})
    and ${f:virt_check:VM:BARE}, which tuned resolves with virt-what and we
    with systemd-detect-virt; when virtualisation cannot be told, both
    alternatives (joined: every profile tuned could pick). Any other
    function raises Unresolved."""
    def one(m):
        expr = m.group(1)
        if expr in variables:
            return _expand(ctx, variables[expr], variables, facts)
        parts = expr.split(":")
        if parts[0] == "f" and len(parts) == 4 and parts[1] == "virt_check":
            virt = facts.get("virt")
            if virt == "unknown":
                return parts[2] + "," + parts[3]
            return parts[2] if virt != "none" else parts[3]
        raise Unresolved("${%s}" % expr)
    for _ in range(10):
        if "$" not in value:
            return value
        value = EXPR.sub(one, value)
    raise Unresolved(value)


# Section options that configure the unit itself, not a setting
# (tuned/profiles/unit.py).
UNIT_KEYS = ("type", "replace", "enabled", "devices", "devices_udev_regex", "cpuinfo_regex",
             "uname_regex", "script_pre", "script_post", "drop", "priority")
# What tuned's Unit() takes as true for enabled= and replace= (only these:
# "yes" is false).
TRUE = ("True", "true", "1")


def _load(ctx, names, facts, files, profiles, unresolved, where=None):
    """tuned's Loader._load_profile(): [(rel, parsed)] in merge order, each
    profile after the ones it includes, each file once; an include that
    cannot be resolved goes to unresolved."""
    for name in names:
        optional = name.startswith("-")     # "-NAME": included when it exists
        name = name[1:] if optional else name
        rel, text = _find(ctx, name, files)
        if rel is None:
            if not optional and not _find(ctx, name)[0]:
                # tuned would refuse the whole profile, or find it where we
                # do not look: either way we cannot tell what tuned sets.
                unresolved.append("%s (no tuned profile %r in %s)" % (
                    where, name, ", ".join("/" + d for d in PROFILE_DIRS)))
            continue
        files.append(rel)
        conf = _parse(text)
        include = conf.get("main", {}).get("include", "")
        here = "%s: include=%s" % (ctx.show(rel), include)
        try:
            include = _expand(ctx, include, conf.get("variables", {}), facts)
        except Unresolved as e:
            unresolved.append("%s (%s)" % (here, e))
            include = ""
        _load(ctx, [n for n in INCLUDE_SEP.split(include.strip()) if n], facts, files,
              profiles, unresolved, here)
        profiles.append((ctx.show(rel), conf))


def _units(profiles):
    """tuned's Merger: {section: unit} over the profiles in order. A unit
    is {type, enabled, cpuinfo_regex, uname_regex, options: {key: (value,
    shown file)}}. A later section of the same name replaces the unit with
    replace=True|true|1; otherwise its type and enabled (default: true) win,
    its regexes when it sets them, drop= removes options, its options are
    added."""
    units = {}
    for shown, conf in profiles:
        for sec, keys in conf.items():
            if sec == "main":
                continue
            u = {"type": keys.get("type", sec), "enabled": keys.get("enabled", "True") in TRUE,
                 "cpuinfo_regex": keys.get("cpuinfo_regex"), "uname_regex": keys.get("uname_regex"),
                 "options": dict((k, (v, shown)) for k, v in keys.items() if k not in UNIT_KEYS)}
            old = units.get(sec)
            if old is None or keys.get("replace") in TRUE:
                units[sec] = u
                continue
            old["type"], old["enabled"] = u["type"], u["enabled"]
            for k in ("cpuinfo_regex", "uname_regex"):
                old[k] = u[k] if u[k] is not None else old[k]
            for k in re.split(r"\b\s*[,;]\s*", keys.get("drop", "")):
                old["options"].pop(k, None)
            old["options"].update(u["options"])
    return units


def _sections(ctx, name, facts):
    """({section: unit}, {variable: value}, [unresolved messages]) of tuned
    profile name after include= and the merge."""
    profiles, unresolved = [], []
    _load(ctx, [name], facts, [], profiles, unresolved)
    units = _units(profiles)
    variables = dict((k, v) for k, (v, _) in units.pop("variables", {"options": {}})["options"].items())
    return units, variables, unresolved


def uname_string(ctx):
    """" ".join(os.uname()) as tuned matches uname_regex, of the root's kernel."""
    u = os.uname()
    parts = []
    for f, default in (("ostype", u.sysname), ("hostname", u.nodename),
                       ("osrelease", u.release), ("version", u.version), ("arch", u.machine)):
        v = ctx.read("proc/sys/kernel/" + f) if ctx.root != "/" else None
        parts.append(v.strip() if v else default)
    return " ".join(parts)


def _unit_applies(ctx, unit, variables):
    """tuned's UnitManager.create(): a disabled unit, or one whose
    cpuinfo_regex/uname_regex does not match this host, sets nothing."""
    def opt(k):
        v = unit[k]
        return None if v is None else EXPR.sub(
            lambda m: variables.get(m.group(1), m.group(0)), v)
    if not unit["enabled"]:
        return False
    for k, text in (("cpuinfo_regex", lambda: ctx.read("proc/cpuinfo") or ""),
                    ("uname_regex", lambda: uname_string(ctx))):
        rx = opt(k)
        if rx is None:
            continue
        try:
            if not re.search(rx, text(), re.M):
                return False
        except re.error:
            return False        # tuned's re.search raises: the unit is not created
    return True


def service_counts(ctx):
    """tuned owns knobs only when tuned.service is enabled (it will run at
    boot) or active now; an installed but disabled tuned sets nothing."""
    if ctx.is_masked("etc/systemd/system/tuned.service"):
        return False
    return bool(glob.glob(ctx.path("etc/systemd/system/*.wants/tuned.service"))
                or ctx.exists("run/systemd/units/invocation:tuned.service"))


def _reapply_sysctl(ctx):
    """tuned-main.conf's reapply_sysctl (default 1)."""
    for line in (ctx.read_config("etc/tuned/tuned-main.conf") or "").splitlines():
        k, sep, v = INLINE_COMMENT.sub("", line).partition("=")
        if sep and k.strip() == "reapply_sysctl":
            return v.strip().lower() in ("1", "true", "yes", "y", "on")
    return True


def owned(ctx, facts=None):
    """{knob name: "tuned profile NAME (file)"} for the active tuned profile.

    When an include cannot be resolved, tuned may set anything its plugins
    reach (sysctl, vm, and any sysfs path): every knob is left to tuned,
    and the reason names the include. With reapply_sysctl (the default),
    tuned writes the sysctl.d values again after its own: those knobs are
    the sysctl.d files' (tuned puts them back whenever it applies).
    """
    active = (ctx.read_config("etc/tuned/active_profile") or "").split()
    if not active or not (ctx.exists("usr/sbin/tuned") or ctx.exists("usr/bin/tuned")):
        return {}
    if not service_counts(ctx):
        return {}
    if facts is None:
        from .recommend import Facts
        facts = Facts(ctx)
    result = {}
    for name in active:
        secs, variables, unresolved = _sections(ctx, name, facts)
        if unresolved:
            who = ("tuned profile %s: cannot resolve %s, so every knob tuned could set "
                   "is left to it" % (name, "; ".join(unresolved)))
            for k in schema.KNOBS:
                result.setdefault(k.name, who)
            continue
        has_sysctl = False
        for unit in secs.values():
            if not _unit_applies(ctx, unit, variables):
                continue
            plugin = unit["type"]
            has_sysctl = has_sysctl or plugin == "sysctl"
            for key, (_, shown) in unit["options"].items():
                who = "tuned profile %s (%s)" % (name, shown)
                if plugin == "sysctl":
                    knob = "sysctl." + key.replace("/", ".")
                    if knob in schema.BY_NAME:
                        result[knob] = who
                elif plugin == "vm" and key in THP_VM_KEYS:
                    result[THP_VM_KEYS[key]] = who
                elif plugin == "sysfs":
                    for k in schema.KNOBS:
                        if fnmatch.fnmatch("/" + k.path, key):
                            result[k.name] = who
        if has_sysctl and _reapply_sysctl(ctx):
            for knob, (value, where) in sysctld.read(ctx, sysctld.TUNED_DIRS).items():
                result[knob] = ("%s (tuned profile %s re-applies it after its own sysctls: "
                                "reapply_sysctl in /etc/tuned/tuned-main.conf)" % (where, name))
    # Both forms of one kernel setting have one owner.
    for a, b in schema.PAIRS:
        if a in result or b in result:
            result.setdefault(a, result.get(b))
            result.setdefault(b, result.get(a))
    return result


def active_profile(ctx):
    active = (ctx.read_config("etc/tuned/active_profile") or "").strip()
    return active or None
