"""Coexistence with tuned: the knobs tuned owns are left to tuned.

When tuned is installed and has an active profile (/etc/tuned/active_profile),
every knob that profile sets (its [sysctl] keys, [vm] transparent_hugepages,
[sysfs] paths, following include=) is skipped by apply and verify, with a
message naming the tuned profile. Two owners never write the same knob, and
tuned keeps working for everything else (CPU, disks, network).
See systemd/README.md for why this and not Conflicts= or a tuned include.
"""

import fnmatch
import re

from . import schema

PROFILE_DIRS = ("etc/tuned/profiles", "etc/tuned", "usr/lib/tuned/profiles", "usr/lib/tuned")
THP_VM_KEYS = {"transparent_hugepages": "thp.enabled", "transparent_hugepage": "thp.enabled",
               "transparent_hugepage.defrag": "thp.defrag"}


def _parse(text):
    """{section: {key: value}}; lenient, since the file is tuned's."""
    out, sec = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            sec = out.setdefault(line[1:-1].strip(), {})
        elif "=" in line and sec is not None:
            k, v = line.split("=", 1)
            sec[k.strip()] = v.strip()
    return out


def _find(ctx, name):
    for d in PROFILE_DIRS:
        rel = "%s/%s/tuned.conf" % (d, name)
        text = ctx.read(rel)
        if text is not None:
            return rel, text
    return None, None


def _sections(ctx, name, depth=0):
    """{section: (plugin type, keys, shown file)} after include= and replace=."""
    rel, text = _find(ctx, name)
    if rel is None or depth > 10:
        return {}
    conf = _parse(text)
    merged = {}
    for inc in re.split(r"[,\s]+", conf.get("main", {}).get("include", "")):
        if inc and "$" not in inc:
            merged.update(_sections(ctx, inc, depth + 1))
    for sec, keys in conf.items():
        if sec == "main":
            continue
        plugin = keys.get("type", sec)
        own = set(k for k in keys if k not in ("type", "replace", "enabled", "devices"))
        if sec in merged and keys.get("replace", "0").lower() not in ("1", "true", "yes"):
            own |= merged[sec][1]
        merged[sec] = (plugin, own, ctx.show(rel))
    return merged


def owned(ctx):
    """{knob name: "tuned profile NAME (file)"} for the active tuned profile."""
    active = (ctx.read("etc/tuned/active_profile") or "").split()
    if not active or not (ctx.exists("usr/sbin/tuned") or ctx.exists("usr/bin/tuned")):
        return {}
    result = {}
    for name in active:
        for plugin, keys, shown in _sections(ctx, name).values():
            who = "tuned profile %s (%s)" % (name, shown)
            for key in keys:
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
    return result


def active_profile(ctx):
    active = (ctx.read("etc/tuned/active_profile") or "").strip()
    return active or None
