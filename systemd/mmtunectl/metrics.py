"""status --prometheus: node_exporter's textfile collector format.

Prometheus text exposition format 0.0.4: per metric family one "# HELP" and
one "# TYPE" line, then its samples, families never interleaved; label
values escape backslash, double quote and newline; counters end in _total.
--output FILE writes FILE.tmp.PID in the same directory and renames it, so
that node_exporter never reads half a file (it ignores names not ending in
.prom).
"""

import json
import os
import re

from . import VERSION, cgroups, engine, health

NAME_BAD = re.compile(r"[^a-zA-Z0-9_]")
INTERNAL = 7
HEALTH_HELP = ("Exit status of mmtunectl verify: 0 ok, 1 drift, 2 error, 3 mmtune.ko expected "
               "but not loaded, 5 kernel without mmtune hooks, 7 internal error of mmtunectl.")


def _name(*parts):
    return NAME_BAD.sub("_", "_".join(parts))


def _escape(value):
    return str(value).replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n")


def _labels(labels):
    if not labels:
        return ""
    return "{" + ",".join('%s="%s"' % (k, _escape(v)) for k, v in labels) + "}"


def _num(v):
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, float):
        return repr(v)
    return str(v)


class Families(object):
    def __init__(self):
        self.order = []
        self.fam = {}

    def add(self, name, kind, help_text, value, labels=()):
        if name not in self.fam:
            self.order.append(name)
            self.fam[name] = (kind, help_text, [])
        self.fam[name][2].append((tuple(labels), value))

    def text(self):
        out = []
        for name in self.order:
            kind, help_text, samples = self.fam[name]
            out.append("# HELP %s %s" % (name, help_text.replace("\\", "\\\\").replace("\n", "\\n")))
            out.append("# TYPE %s %s" % (name, kind))
            for labels, value in samples:
                out.append("%s%s %s" % (name, _labels(labels), _num(value)))
        return "\n".join(out) + "\n"


def counter_name(d, n):
    """mmtune_<dir>_<counter>_total; a counter of bytes carries the unit
    before _total, as Prometheus names want (bytes_not_written ->
    not_written_bytes_total)."""
    if n.startswith("bytes_"):
        n = n[len("bytes_"):] + "_bytes"
    return _name("mmtune", d, n, "total")


def render(ctx, report):
    f = Families()
    code = report.status()
    f.add("mmtune_ok", "gauge", "1 when mmtunectl verify exits 0: the kernel holds the profile.",
          code == health.OK)
    f.add("mmtune_health_status", "gauge", HEALTH_HELP, code)
    f.add("mmtune_info", "gauge", "mmtunectl's version, the module's, and the profiles.", 1,
          [("mmtunectl_version", VERSION),
           ("module_version", report.module.get("version") or ""),
           ("abi_version", report.module.get("abi_version") or ""),
           ("applied_profile", (report.state or {}).get("profile") or ""),
           ("selected_profile", report.selected.name if report.selected else "")])
    f.add("mmtune_kernel_info", "gauge",
          "The running kernel: uname -r and its kernel line (6.1, 6.12; empty when unknown).",
          1, [("release", report.release or ""), ("line", report.line or "")])
    f.add("mmtune_module_loaded", "gauge", "1 while /sys/kernel/mm/mmtune exists.",
          report.module["loaded"])
    f.add("mmtune_module_expected", "gauge",
          "1 when the profile sets mmtune knobs and the kernel has (or may have) the hooks.",
          report.module_expected)
    for feat, state in sorted(report.module["features"].items()):
        f.add("mmtune_feature_available", "gauge",
              "1 when the loaded module has a feature group (features file: on or off; "
              "unavailable or not-offered on this kernel line: 0).",
              state in ("on", "off"), [("feature", feat)])
    for feat, state in sorted(report.module["features"].items()):
        f.add("mmtune_feature_on", "gauge",
              "1 when a feature group of the module is switched on (features file).",
              state == "on", [("feature", feat)])
    for feat, present in sorted(report.features.items()):
        f.add("mmtune_kernel_feature_present", "gauge",
              "1 when this kernel has a feature the profile's knobs need (thp, zswap, mmtune, "
              "an mTHP size); 0: its knobs are skipped.", present, [("feature", feat)])
    f.add("mmtune_recommendation_differs", "gauge",
          "1 when the recommend rules now pick another profile than the one the first "
          "apply --auto recorded (kept until mmtunectl recommend --reset).",
          bool(report.recorded and report.recommended
               and report.recorded != report.recommended))
    _last_run(f, ctx)
    last = engine.load_last_apply(ctx)
    f.add("mmtune_apply_success", "gauge",
          "1 when the last apply this boot succeeded; 0 when it failed or none ran.",
          bool(last and last.get("success")))
    if last and isinstance(last.get("time"), (int, float)):
        f.add("mmtune_apply_timestamp_seconds", "gauge",
              "Unix time of the last apply attempt this boot.", float(last["time"]))
    for row in report.rows:
        if row["wanted"] is None:
            continue
        f.add("mmtune_knob_drift", "gauge",
              "1 when a knob the profile sets differs from it (drift, or required and missing).",
              row["state"] in ("drift", "missing"), [("knob", row["name"])])
    for key, value in sorted(engine.counters(ctx).items()):
        _, d, n = key.split(".", 2)
        f.add(counter_name(d, n), "counter",
              "Counter %s of mmtune.ko (/sys/kernel/mm/mmtune/%s/%s)." % (key, d, n), value)
    for key, value in sorted(engine.gauges(ctx).items()):
        _, d, n = key.split(".", 2)
        f.add(_name("mmtune", d, n), "gauge",
              "State %s of mmtune.ko (/sys/kernel/mm/mmtune/%s/%s)." % (key, d, n), value)
    _sizes(f, engine.size_counters(ctx))
    _cgroups(f, ctx, report)
    return f.text()


def _cgroups(f, ctx, report):
    """The per-cgroup policy table: its state, every entry's settings and
    counters with a cgroup label (the cgroup2 path), and the drift of each
    cgroup the profile names."""
    for row in report.cgroups:
        if row["cgroup"]:
            f.add("mmtune_cgroup_policy_drift", "gauge",
                  "1 when the entry of a cgroup the profile names differs from the profile.",
                  row["state"] == "drift", [("cgroup", row["cgroup"])])
    if not cgroups.present(ctx):
        return
    # Its one-number files (enabled, the number of entries and their bound)
    # are states, gauges: never counters.
    for name, v in cgroups.numbers(ctx):
        f.add(_name("mmtune_cgroup_policy", name), "gauge",
              "The per-cgroup policy table's %s (/sys/kernel/mm/mmtune/cgroup_policy/%s)."
              % (name, name), v)
    for path, keys in cgroups.read_entries(ctx).items():
        for k, v in keys.items():
            m = re.match(r"^(.*)_([0-9]+kB)$", k)
            f.add("mmtune_cgroup_policy_setting", "gauge",
                  "One key of a cgroup's entry (cgroup_policy/entries): key, size (empty for "
                  "orders) and value as labels.", 1,
                  [("cgroup", path), ("key", m.group(1) if m else k),
                   ("size", m.group(2) if m else ""), ("value", v)])
    for path, stats in cgroups.read_stats(ctx).items():
        for counter, size, n in stats:
            f.add(_name("mmtune_cgroup_policy", counter, "total"), "counter",
                  "Per cgroup entry and size: %s (cgroup_policy/stats)." % counter, n,
                  [("cgroup", path), ("size", size)])


def size_metric(stat):
    """(name, type) of a per-size kernel stat: mmtune_thp_<stat>_total with
    a size label, one family per stat, not one per size; nr_* files are
    counts of folios now, gauges without _total."""
    if stat.startswith("nr_"):
        return _name("mmtune", "thp", stat), "gauge"
    return _name("mmtune", "thp", stat, "total"), "counter"


def _sizes(f, sizes):
    """The kernel's hugepages-<size>kB/stats/* (6.12) with a size label."""
    stats = sorted(set(n for st in sizes.values() for n in st))
    for stat in stats:
        name, kind = size_metric(stat)
        for size, st in sizes.items():
            if stat in st:
                f.add(name, kind, "Per mTHP size: the kernel's /sys/kernel/mm/transparent_hugepage/"
                      "hugepages-<size>kB/stats/%s." % stat, st[stat], [("size", size)])


LAST_RUN = "run/mmtune/last-run.json"


def save_last_run(ctx, command, status):
    """The exit status of the last apply or rollback, for the metrics."""
    try:
        os.makedirs(ctx.path("run/mmtune"), mode=0o755, exist_ok=True)
        engine.save_json(ctx, LAST_RUN, {"time": ctx.clock(), "command": command,
                                         "exit_status": status})
    except OSError:
        pass


def _last_run(f, ctx, error_now=False):
    try:
        last = json.loads(ctx.read(LAST_RUN) or "null")
    except (ValueError, OSError):
        last = None
    last = last if isinstance(last, dict) else {}
    if error_now:
        last = {"time": ctx.clock(), "command": "status", "exit_status": INTERNAL}
    f.add("mmtune_last_run_error", "gauge",
          "1 when the last mmtunectl apply, rollback or metrics run failed with an internal "
          "error (exit 7).", last.get("exit_status") == INTERNAL)
    if isinstance(last.get("time"), (int, float)):
        f.add("mmtune_last_run_timestamp_seconds", "gauge",
              "Unix time of the last mmtunectl apply, rollback or failed metrics run.",
              float(last["time"]))
        f.add("mmtune_last_run_exit_status", "gauge",
              "Exit status of the last mmtunectl apply or rollback (7: internal error).",
              last.get("exit_status"), [("command", last.get("command", ""))])


def render_internal_error(ctx):
    """What --output gets when mmtunectl itself fails: never a stale file."""
    f = Families()
    f.add("mmtune_ok", "gauge", "1 when mmtunectl verify exits 0: the kernel holds the profile.",
          False)
    f.add("mmtune_health_status", "gauge", HEALTH_HELP, INTERNAL)
    _last_run(f, ctx, error_now=True)
    return f.text()


def write_atomic(path, text):
    d = os.path.dirname(os.path.abspath(path))
    tmp = os.path.join(d, ".%s.tmp.%d" % (os.path.basename(path), os.getpid()))
    try:
        with open(tmp, "w") as fh:
            fh.write(text)
            fh.flush()
            os.fchmod(fh.fileno(), 0o644)
        os.rename(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
