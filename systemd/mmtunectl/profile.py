"""Profiles: INI parsing, layering, drop-ins, masking, include=, validation.

A profile NAME is the file profiles/NAME.conf in the first layer that has it
(/run/mmtune, /etc/mmtune, /usr/lib/mmtune), plus drop-ins
profiles/NAME.conf.d/*.conf from every layer (a drop-in name in a higher
layer hides the same name below; a /dev/null symlink masks a file). The
result is built in this order, later assignments winning:
included profiles (in the order listed, each fully resolved), the main
file, its drop-ins sorted by file name. An empty value ("key =") drops the
knob from the profile. Every error names file and line; all errors are
collected, and a profile with any error is never applied.
"""

import difflib
import os
import re

from . import cgroups, schema
from .context import BadFile, read_file

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
WORD_RE = re.compile(r"^[A-Za-z0-9_.+-]+$")
INT_RE = re.compile(r"^-?[0-9]+$")
MAIN_KEYS = ("summary", "include")
TRUE = ("1", "y", "yes", "true", "on")
FALSE = ("0", "n", "no", "false", "off")


class ConfigError(Exception):
    """One or more errors, each "file:line: message"."""

    def __init__(self, errors):
        Exception.__init__(self, "\n".join(errors))
        self.errors = list(errors)


class Setting(object):
    def __init__(self, knob, op, value, optional, origin):
        self.knob = knob
        self.op = op            # "=", ">=" or "<="
        self.value = value      # normalised, as the kernel reads it back
        self.optional = optional
        self.origin = origin    # "/path:line"

    def wanted(self):
        return self.value if self.op == "=" else self.op + self.value


class Profile(object):
    def __init__(self, name):
        self.name = name
        self.summary = ""
        self.files = []         # every file read, in order
        self.settings = {}      # knob name -> Setting
        self.cgroups = {}       # [cgroup:TARGET] -> cgroups.Section, in file order

    def ordered(self):
        """Settings in schema order: the order apply writes them."""
        return [self.settings[k.name] for k in schema.KNOBS if k.name in self.settings]


# A "#" after white space starts a comment, as in tuned's profiles: values
# never contain " #".
INLINE_COMMENT = re.compile(r"\s#.*$")


def parse_ini(text, shown, headers=None):
    """(entries, errors). Entries: (section, optional, key, optional, value, line).
    headers, when given, gets (line, section) of every section header."""
    entries, errors = [], []
    section, sec_opt = None, False
    for n, raw in enumerate(text.splitlines(), 1):
        line = INLINE_COMMENT.sub("", raw).strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            if not line.endswith("]"):
                errors.append("%s:%d: bad section header: no closing ']'" % (shown, n))
                section = None
                continue
            section = line[1:-1].strip()
            sec_opt = section.startswith("?")
            section = section.lstrip("?").strip()
            if headers is not None:
                headers.append((n, section))
            continue
        if "=" not in line:
            # The line itself is not echoed: a symlink may lead anywhere.
            errors.append("%s:%d: neither 'key = value' nor a [section] header" % (shown, n))
            continue
        if section is None:
            errors.append("%s:%d: assignment outside of a section" % (shown, n))
            continue
        key, value = line.split("=", 1)
        key = key.strip()
        key_opt = key.startswith("?")
        key = key.lstrip("?").strip()
        entries.append((section, sec_opt, key, key_opt, value.strip(), n))
    return entries, errors


def parse_value(knob, raw):
    """(op, normalised value) or raise ValueError with a readable reason."""
    op = "="
    if raw[:2] in (">=", "<="):
        op, raw = raw[:2], raw[2:].strip()
        if knob.kind != "int":
            raise ValueError("'%s' needs a number, %s is %s" % (op, knob.name, describe(knob)))
    if knob.kind == "int":
        if not INT_RE.match(raw):
            raise ValueError("%r is not an integer" % raw)
        v = int(raw)
        if not any(lo <= v <= hi for lo, hi in knob.ranges):
            raise ValueError("%d is out of range (%s)" % (v, describe(knob)))
        return op, str(v)
    if knob.kind in ("bool01", "boolYN"):
        low = raw.lower()
        if low in TRUE:
            return op, "1" if knob.kind == "bool01" else "Y"
        if low in FALSE:
            return op, "0" if knob.kind == "bool01" else "N"
        raise ValueError("%r is not a boolean (0 or 1)" % raw)
    if knob.kind == "choice":
        if raw not in knob.choices:
            raise ValueError("%r is not one of %s" % (raw, "|".join(knob.choices)))
        return op, raw
    if not WORD_RE.match(raw):
        raise ValueError("%r is not a single word" % raw)
    return op, raw


def describe(knob):
    if knob.kind == "int":
        return ", ".join("%d..%d" % r if r[0] != r[1] else str(r[0]) for r in knob.ranges)
    if knob.kind in ("bool01", "boolYN"):
        return "0|1"
    if knob.kind == "choice":
        return "|".join(knob.choices)
    return "a word"


def normalise_live(knob, text):
    """What the kernel holds, in the same form parse_value produces."""
    text = text.strip()
    if knob.bracket:
        m = re.search(r"\[([^\]]*)\]", text)
        if m:
            return m.group(1)
    if knob.kind == "boolYN":
        return {"1": "Y", "0": "N", "y": "Y", "n": "N"}.get(text.lower(), text)
    if knob.kind == "int" and INT_RE.match(text):
        return str(int(text))
    return text


def satisfied(setting, live):
    if live is None:
        return False
    if setting.op == "=":
        return live == setting.value
    if not INT_RE.match(live):
        return False
    if setting.op == ">=":
        return int(live) >= int(setting.value)
    return int(live) <= int(setting.value)


def _suggest(word, choices):
    close = difflib.get_close_matches(word, choices, n=1)
    return " (did you mean %r?)" % close[0] if close else ""


# A name with a size at its end: hugepages-64kB, policy_64kB, and the
# misspellings of the unit (64KB, 64k, 2M, 2MB).
SIZED = re.compile(r"^(.*[-_])([0-9]+)([A-Za-z]*)$")
UNIT_KB = {"kb": 1, "k": 1, "m": 1024, "mb": 1024}


def _sizes_text(sizes):
    return ", ".join(sizes)


def size_error(name, names):
    """For a per-size name that is not one of names (sections or keys): why,
    naming the sizes there are, or None when name is not a per-size one.
    Sizes are written as the kernel names its directories, in kB."""
    m = SIZED.match(name)
    if not m:
        return None
    prefix, number, unit = m.groups()
    sizes = []
    for n in names:
        if n.startswith(prefix) and re.match(r"^[0-9]+kB$", n[len(prefix):]):
            sizes.append(n[len(prefix):])
    if not sizes:
        return None
    sizes.sort(key=lambda x: int(x[:-2]))
    if unit != "kB" and unit.lower() in UNIT_KB:
        fix = "%dkB" % (int(number) * UNIT_KB[unit.lower()])
        if fix in sizes:
            return "sizes are written in kB, as the kernel names them (did you mean %r?)" % (
                prefix + fix)
    return "no size %s%s: %s<size>kB exists for %s" % (
        number, unit, prefix, _sizes_text(sizes))


def _other_size(section, key):
    """For a key another size's section has (enabled in [thp.hugepages-8kB]):
    the sizes that have it."""
    m = SIZED.match(section)
    if not m:
        return None
    sizes = [k.size for k in schema.KNOBS if k.key == key and k.size
             and k.section == m.group(1) + k.size]
    if not sizes:
        return None
    keys = [k.key for k in schema.KNOBS if k.section == section]
    return "size %s%s has only %s; %s exists for %s" % (
        m.group(2), m.group(3), ", ".join(keys), key, _sizes_text(sizes))


def read_text(path, shown, errors):
    """A profile file's text; an unreadable one is an error with its name
    (never its content: it may be any file a symlink points to)."""
    try:
        return (read_file(path) or b"").decode("utf-8")   # None: removed while we looked
    except BadFile as e:
        errors.append("%s: %s" % (shown, e))
    except OSError as e:
        errors.append("%s: cannot read: %s" % (shown, e.strerror or e))
    except UnicodeDecodeError as e:
        errors.append("%s: not UTF-8 text (byte %d)" % (shown, e.start))
    return ""


class Loader(object):
    def __init__(self, ctx):
        self.ctx = ctx

    def main_file(self, name):
        """(rel path, masked) of the winning main file, or (None, False)."""
        for _, d in self.ctx.layers():
            rel = "%s/profiles/%s.conf" % (d, name)
            if self.ctx.exists(rel) and not os.path.isdir(self.ctx.path(rel)):
                # Whatever is there wins: one that cannot be read (a FIFO,
                # a dangling symlink) is an error, never a lower layer's.
                return rel, self.ctx.is_masked(rel)
        return None, False

    def dropins(self, name):
        """Drop-in files in name order; a higher layer hides the same name."""
        chosen = {}
        for _, d in reversed(self.ctx.layers()):
            rel = "%s/profiles/%s.conf.d" % (d, name)
            for f in self.ctx.listdir(rel):
                if f.endswith(".conf"):
                    chosen[f] = rel + "/" + f
        return [chosen[f] for f in sorted(chosen) if not self.ctx.is_masked(chosen[f])]

    def names(self):
        """{name: (rel path of the winning file, layer, masked)} over all layers."""
        found = {}
        for layer, d in reversed(self.ctx.layers()):
            for f in self.ctx.listdir(d + "/profiles"):
                rel = "%s/profiles/%s" % (d, f)
                if f.endswith(".conf") and not os.path.isdir(self.ctx.path(rel)):
                    found[f[:-5]] = (rel, layer, self.ctx.is_masked(rel))
        return found

    def load(self, name):
        prof, errors = self.resolve(name)
        if errors:
            raise ConfigError(errors)
        return prof

    def resolve(self, name):
        """(profile, errors) without raising: check wants both."""
        errors = []
        prof = self._load(name, [], errors, None)
        # A parent's error shows up again in each profile that includes it.
        return prof, sorted(set(errors), key=errors.index)

    def _load(self, name, chain, errors, where):
        prof = Profile(name)
        at = where + ": " if where else ""
        if not NAME_RE.match(name):
            errors.append("%sbad profile name %r" % (at, name))
            return prof
        rel, masked = self.main_file(name)
        if rel is None:
            errors.append("%sno profile %r (looked in %s)" % (
                at, name, ", ".join(self.ctx.show(d) + "/profiles" for _, d in self.ctx.layers())))
            return prof
        if masked:
            errors.append("%sprofile %r is masked by %s" % (at, name, self.ctx.show(rel)))
            return prof
        # (shown name, real path) of the layered files
        files = [(self.ctx.show(f), self.ctx.path(f)) for f in [rel] + self.dropins(name)]
        parsed = []
        for i, (shown, path) in enumerate(files):
            entries, errs = parse_ini(read_text(path, shown, errors), shown)
            errors.extend(errs)
            parsed.append((shown, entries, i == 0))
        # Includes first, so that this profile's own lines override them.
        for shown, entries, is_main in parsed:
            for section, _, key, _, value, line in entries:
                if section != "main" or key != "include":
                    continue
                if not is_main:
                    errors.append("%s:%d: include= is only allowed in the main profile file"
                                  % (shown, line))
                    continue
                for inc in re.split(r"[,\s]+", value):
                    if not inc:
                        continue
                    if inc in chain + [name]:
                        errors.append("%s:%d: include cycle: %s" % (
                            shown, line, " -> ".join(chain + [name, inc])))
                        continue
                    parent = self._load(inc, chain + [name], errors,
                                        "%s:%d" % (shown, line))
                    prof.files.extend(parent.files)
                    prof.settings.update(parent.settings)
                    for t, s in parent.cgroups.items():
                        if t in prof.cgroups:
                            prof.cgroups[t].keys.update(s.keys)
                            prof.cgroups[t].optional = s.optional
                        else:
                            prof.cgroups[t] = s
        for shown, entries, is_main in parsed:
            prof.files.append(shown)
            self._settings(prof, shown, entries, errors)
        self._check_relations(prof, errors)
        return prof

    @staticmethod
    def _settings(prof, shown, entries, errors):
        """Validate one file's entries into prof.settings (later files win)."""
        seen = {}
        for section, sec_opt, key, key_opt, value, line in entries:
            here = "%s:%d" % (shown, line)
            if (section, key) in seen:
                errors.append("%s: duplicate key %s in [%s], first set on line %d"
                              % (here, key, section, seen[(section, key)]))
                continue
            seen[(section, key)] = line
            if section == "main":
                if key not in MAIN_KEYS:
                    errors.append("%s: unknown key %r in [main]%s" % (
                        here, key, _suggest(key, MAIN_KEYS)))
                elif key == "summary":
                    prof.summary = value
                continue
            if section.startswith(cgroups.PREFIX):
                cgroups.add_entry(prof, section, sec_opt, key, value, here, errors)
                continue
            if section not in schema.SECTIONS:
                why = size_error(section, schema.SECTIONS)
                errors.append("%s: unknown section [%s]%s" % (
                    here, section, ": " + why if why else
                    _suggest(section, schema.SECTIONS + ["main"])))
                continue
            knob = schema.BY_NAME.get(section + "." + key)
            if knob is None:
                keys = [k.key for k in schema.KNOBS if k.section == section]
                why = size_error(key, keys) or _other_size(section, key)
                errors.append("%s: unknown key %r in [%s]%s" % (
                    here, key, section, ": " + why if why else _suggest(key, keys)))
                continue
            # The two forms of one kernel setting (schema.PAIRS): the last
            # one set wins, as for one knob; both in one file is ambiguous.
            if knob.pair and ("sysctl", knob.pair[len("sysctl."):]) in seen:
                errors.append("%s: %s and %s (line %d) are one kernel setting: set one of them"
                              % (here, knob.name, knob.pair,
                                 seen[("sysctl", knob.pair[len("sysctl."):])]))
                continue
            if knob.pair:
                prof.settings.pop(knob.pair, None)
            if value == "":
                prof.settings.pop(knob.name, None)
                continue
            try:
                op, v = parse_value(knob, value)
            except ValueError as e:
                errors.append("%s: %s: %s" % (here, knob.name, e))
                continue
            prof.settings[knob.name] = Setting(knob, op, v, sec_opt or key_opt, here)

    def check_file(self, path):
        """Errors of one profile file (main file or drop-in) on its own:
        syntax, sections, keys, values, the pairs the kernel checks, and that
        every profile it includes exists. For Ansible's validate:."""
        errors = []
        if not os.path.lexists(path):
            return ["%s: cannot read: %s" % (path, os.strerror(2))], None
        text = read_text(path, path, errors)
        if errors:
            return errors, None
        entries, errs = parse_ini(text, path)
        errors.extend(errs)
        prof = Profile(os.path.basename(path))
        self._settings(prof, path, entries, errors)
        for section, _, key, _, value, line in entries:
            if section == "main" and key == "include":
                for inc in re.split(r"[,\s]+", value):
                    if inc and not NAME_RE.match(inc):
                        errors.append("%s:%d: bad profile name %r" % (path, line, inc))
                    elif inc and self.main_file(inc)[0] is None:
                        errors.append("%s:%d: no profile %r (looked in %s)" % (
                            path, line, inc, ", ".join(self.ctx.show(d) + "/profiles"
                                                        for _, d in self.ctx.layers())))
        # On its own: the knobs it does not set may be set elsewhere.
        self._check_relations(prof, errors, defaults=False)
        return errors, prof

    @staticmethod
    def _check_relations(prof, errors, defaults=True):
        """The rules the module checks between two knobs (schema.RELATIONS);
        with defaults, a knob the profile does not set is at the module's
        default, as the kernel checks against the value it holds."""
        for a, op, b, unless in schema.RELATIONS:
            sa, sb = prof.settings.get(a), prof.settings.get(b)
            if not (sa and sb or defaults and (sa or sb)):
                continue
            if any(s and s.op != "=" for s in (sa, sb)):
                continue
            va, vb = [int(s.value if s else schema.BY_NAME[n].default)
                      for s, n in ((sa, a), (sb, b))]
            if not schema.holds(op, va, vb, unless):
                errors.append("%s: %s = %d must be %s %s = %d%s (%s)" % (
                    (sa or sb).origin, a, va, op, b, vb,
                    "" if unless is None else " or be " + unless,
                    sb.origin if sa and sb else "%s: the module's default, the profile does "
                    "not set it" % (b if sa else a)))
