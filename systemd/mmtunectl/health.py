"""Is this host tuned as it should be? One evaluation for verify, status
--json and status --prometheus, with one exit status.

Exit statuses (most severe first when several apply):
  2  error: a profile, the rules or an override cannot be read or is bad,
     or the state file is corrupt (one the user may not read: cli.main's 4)
  3  mmtune expected but not loaded: the profile sets mmtune knobs and the
     kernel has the mmtune hooks (or it cannot be told), but
     /sys/kernel/mm/mmtune is absent (module not loaded, DKMS build failed,
     or a module for another hook ABI, which the kernel refuses)
  1  drift: a knob differs from the profile, a required knob is missing,
     or the overrides and rules now pick another profile than the applied one
  5  kernel without mmtune hooks: the profile sets mmtune knobs but this
     kernel cannot run mmtune.ko (no CONFIG_MMTUNE_HOOKS, e.g. a fallback
     kernel); everything else matches
  0  the kernel holds every value of the profile
"""

import re

from . import cgroups, engine, recommend, schema, tuned
from .profile import ConfigError, Loader
from .recommend import Selection

OK, DRIFT, ERROR, NOT_LOADED, NO_HOOKS = 0, 1, 2, 3, 5
HEALTH = {OK: "ok", DRIFT: "drift", ERROR: "error", NOT_LOADED: "module-not-loaded",
          NO_HOOKS: "kernel-without-hooks"}
SEVERITY = [ERROR, NOT_LOADED, DRIFT, NO_HOOKS]


def kernel_hooks(ctx):
    """"yes", "no" or "unknown": does this kernel have CONFIG_MMTUNE_HOOKS?

    A loaded module proves it. Otherwise: the hook core's debugfs file, the
    kernel's config in /boot, then its exported symbol in /proc/kallsyms
    (names are visible to every user).
    """
    if ctx.exists(schema.MMTUNE):
        return "yes"
    if ctx.exists("sys/kernel/debug/mmtune_hooks"):
        return "yes"
    release = (ctx.read("proc/sys/kernel/osrelease") or "").strip()
    if release:
        try:
            config = ctx.read("boot/config-" + release)
        except OSError:
            config = None
        if config is not None:
            return "yes" if "\nCONFIG_MMTUNE_HOOKS=y" in "\n" + config else "no"
    try:
        syms = ctx.read("proc/kallsyms")
    except OSError:
        syms = None
    if syms:
        return "yes" if " mmtune_register\n" in syms or " mmtune_register\t" in syms else "no"
    return "unknown"


def hook_kernels(ctx):
    """Installed kernels other than the running one whose /boot config has
    the hooks, newest first.

    After a distribution kernel update the boot loader's default may be the
    distribution's kernel (Debian 13's next 6.12.<n+1>+deb13 sorts above
    our 6.12.<n>-mmtune<build id>): status then names the kernels to boot instead.
    """
    release = (ctx.read("proc/sys/kernel/osrelease") or "").strip()
    found = []
    for name in ctx.listdir("boot"):
        if not name.startswith("config-") or name == "config-" + release:
            continue
        try:
            config = ctx.read("boot/" + name)
        except OSError:
            continue
        if config and "\nCONFIG_MMTUNE_HOOKS=y" in "\n" + config:
            found.append(name[len("config-"):])

    def key(rel):
        return [(0, int(p), "") if p.isdigit() else (1, 0, p)
                for p in re.split(r"[.+~-]", rel)]
    return sorted(found, key=key, reverse=True)


class Report(object):
    """Everything verify and status show."""

    def __init__(self):
        self.errors = []
        self.selection = None       # the active Selection (applied, else selected)
        self.selected = None        # what the overrides and rules pick now
        self.state = None
        self.profile = None
        self.rows = []
        self.cgroups = []           # cgroups.rows(): one per cgroup the profile names
        self.problems = []          # (exit status, message)
        self.module = None
        self.hooks = None
        self.hook_kernels = []
        self.module_expected = False
        # {feature: present} of the kernel features the profile's knobs need
        self.features = {}
        self.recommended = None     # what the rules pick now
        self.recorded = None        # the pick the first apply --auto recorded
        self.owned = {}             # knobs tuned (or what it re-applies) owns
        self.release = None         # uname -r
        self.line = None            # its kernel line, "6.12"

    def notes(self):
        """Warnings of the selection (a stale recorded pick)."""
        return self.selected.notes if self.selected else []

    def status(self):
        codes = set(c for c, _ in self.problems)
        if self.errors:
            codes.add(ERROR)
        for c in SEVERITY:
            if c in codes:
                return c
        return OK


def evaluate(ctx):
    r = Report()
    try:
        r.state = engine.load_state(ctx)
    except engine.StateError as e:
        r.errors.append(str(e))
    try:
        r.selected = recommend.select(ctx)
        r.recorded = recommend.recorded(ctx)[0]
        r.recommended = recommend.select(ctx, use_overrides=False, use_record=False).name
    except ConfigError as e:
        r.errors.extend(e.errors)
    if r.state and r.state.get("profile"):
        r.selection = Selection(r.state["profile"], r.state.get("source", "explicit"),
                                r.state.get("reason", ""))
    else:
        r.selection = r.selected
    if r.selection:
        try:
            r.profile = Loader(ctx).load(r.selection.name)
        except ConfigError as e:
            r.errors.extend(e.errors)
    owned = r.owned = tuned.owned(ctx)
    r.release, r.line = engine.kernel_line(ctx)
    r.rows = engine.knob_rows(ctx, r.profile, owned)
    r.module = engine.module_info(ctx)
    r.cgroups = cgroups.rows(ctx, r.profile)
    if r.cgroups:
        r.features["mmtune.cgroup_policy"] = cgroups.present(ctx)
    for row in r.cgroups:
        if row["state"] in ("drift", "missing"):
            r.problems.append((DRIFT, "%s: %s%s: wanted %s, live %s (%s)" % (
                row["state"], row["section"] or "mmtune.cgroup_policy.enabled",
                " " + row["cgroup"] if row["cgroup"] else "",
                row["wanted"] or "a cgroup", row["live"] or "no such cgroup",
                row["origin"] or "the profile's cgroup sections")))
    for row in r.rows:
        k = schema.BY_NAME[row["name"]]
        # A knob of another kernel line says nothing of this kernel's features.
        if row["wanted"] is not None and k.feature and not row.get("kernel_lines"):
            f = row.get("absent_feature") or k.feature
            r.features[f] = r.features.get(f, True) and not row.get("absent_feature")
    for row in r.rows:
        if row["state"] in ("drift", "missing"):
            r.problems.append((DRIFT, "%s: %s: wanted %s, live %s (%s)" % (
                row["state"], row["name"], row["wanted"],
                row["live"] if row["live"] is not None else "(no such file)", row["origin"])
                + ("; the kernel uses %s" % row["in_use"] if row.get("in_use") else "")))
    # The applied profile must be the one the overrides and rules pick now
    # (config management changed /etc/mmtune/profile, or someone ran
    # `mmtunectl apply X` by hand): the next boot would apply another.
    if r.state and r.selected and r.selected.name != r.selection.name:
        r.problems.append((DRIFT, "drift: profile: applied %s, now selected %s (%s); "
                           "run mmtunectl apply --auto" % (
                               r.selection.name, r.selected.name, r.selected.reason)))
    wants_mmtune = [row["name"] for row in r.rows if row["name"].startswith("mmtune.")
                    and row["wanted"] is not None and row["state"] != "tuned"
                    and not row.get("kernel_lines")]
    if wants_mmtune and not r.module["loaded"]:
        r.hooks = kernel_hooks(ctx)
        if r.hooks == "no":
            r.hook_kernels = hook_kernels(ctx)
            r.problems.append((NO_HOOKS, "kernel: this kernel has no mmtune hooks "
                               "(CONFIG_MMTUNE_HOOKS); %d mmtune knob(s) of the profile "
                               "cannot be set: boot a kernel with the mmtune patches%s"
                               % (len(wants_mmtune),
                                  " (installed: %s; a newer distribution kernel may have "
                                  "become the boot default)" % ", ".join(r.hook_kernels)
                                  if r.hook_kernels else "")))
        else:
            r.module_expected = True
            r.problems.append((NOT_LOADED, "module: mmtune.ko is not loaded (no %s) but "
                               "the kernel %s the mmtune hooks: %d mmtune knob(s) of the "
                               "profile are not set; check `modprobe mmtune`, `dkms status` "
                               "and `journalctl -k -g mmtune` (a module built for another "
                               "hook ABI is refused)" % (
                                   ctx.show(schema.MMTUNE),
                                   "has" if r.hooks == "yes" else "may have",
                                   len(wants_mmtune))))
    else:
        r.hooks = kernel_hooks(ctx)
        r.module_expected = bool(wants_mmtune) and r.hooks != "no"
        if r.hooks == "no":
            r.hook_kernels = hook_kernels(ctx)
    return r
