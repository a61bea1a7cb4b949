"""Safe at boot (issue 16, point 2): a lock deadline, TimeoutSec on every
oneshot unit, the hardening drop-in (systemd-analyze security), optional
knobs the kernel refuses; and ExecReload that re-applies in place."""

import configparser
import errno
import fcntl
import json
import re
import os
import shutil
import subprocess
import sys
import time

import pytest

import fakeroot
from mmtunectl import engine, schema
from mmtunectl.context import Context

UNITS = os.path.join(fakeroot.SYSTEMD, "units")
SWAPPINESS = "proc/sys/vm/swappiness"


def unit(name):
    """{section: {key: [values]}} of a unit file (keys repeat)."""
    out, sec = {}, None
    for line in open(os.path.join(UNITS, name)).read().splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            sec = out.setdefault(line[1:-1], {})
        else:
            k, v = line.split("=", 1)
            sec.setdefault(k, []).append(v)
    return out


def seconds(text):
    return float(text[:-1]) * (60 if text.endswith("min") else 1) if not text.isdigit() \
        else float(text)


def test_lock_deadline(root, run):
    os.makedirs(os.path.join(root, "run/mmtune"))
    lock = os.path.join(root, "run/mmtune/lock")
    holder = subprocess.Popen([sys.executable, "-c", (
        "import fcntl, os, sys, time\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT)\n"
        "fcntl.flock(fd, fcntl.LOCK_EX)\nprint('held', flush=True)\ntime.sleep(30)\n"), lock],
        stdout=subprocess.PIPE, universal_newlines=True)
    try:
        assert holder.stdout.readline() == "held\n"
        before = fakeroot.snapshot(root)
        t = time.monotonic()
        rc, out, err = run("--lock-timeout", "0.5", "apply", "database")
        took = time.monotonic() - t
        assert rc == 6, err
        assert 0.5 <= took < 5
        assert err == ("error: /run/mmtune/lock is held by pid %d; gave up after 0.5 s "
                       "(--lock-timeout); nothing changed\n" % holder.pid)
        assert fakeroot.snapshot(root) == before
        assert run("--lock-timeout", "0.2", "rollback")[0] == 6
    finally:
        holder.kill()
        holder.wait()
    assert run("--lock-timeout", "0.5", "apply", "database")[0] == 0


def test_every_oneshot_unit_has_a_timeout_above_the_lock_deadline():
    names = [n for n in os.listdir(UNITS) if n.endswith(".service")]
    assert sorted(names) == ["mmtune-metrics.service", "mmtune-reapply.service", "mmtune.service"]
    for n in names:
        svc = unit(n)["Service"]
        assert svc["Type"] == ["oneshot"], n
        timeout = svc.get("TimeoutSec") or svc.get("TimeoutStartSec")
        assert timeout, "%s: a oneshot unit has no start timeout by default" % n
        if n == "mmtune.service":
            assert seconds(timeout[-1]) >= engine.DEFAULT_LOCK_TIMEOUT + 30


def test_reload_reapplies_in_place():
    svc = unit("mmtune.service")["Service"]
    assert svc["ExecStart"] == ["/usr/sbin/mmtunectl apply --auto"]
    assert svc["ExecReload"] == ["/usr/sbin/mmtunectl apply --auto --reload"]


def test_no_ordering_cycle_with_a_tmpfs_tmp():
    """Debian 13 mounts /tmp as a tmpfs (tmp.mount), which systemd orders
    after swap.target and before local-fs.target. mmtune.service is before
    swap.target and every swap unit is after it (swap.d/50-mmtune.conf), so
    nothing it is after may lead back to tmp.mount: not local-fs.target, not
    PrivateTmp= (which orders the unit after tmp.mount). On a booted Debian
    13 either one was an ordering cycle that systemd broke at boot by
    dropping a start job (tests/packaging/cloud.sh --release trixie)."""
    svc, hard = unit("mmtune.service"), unit("mmtune.service.d/50-hardening.conf")
    swap = unit("swap.d/50-mmtune.conf")
    before = {}     # unit -> the units it is ordered before

    def edges(a, key, words):
        for w in words:
            for u in w.split():
                (before.setdefault(u, set()).add(a) if key == "After"
                 else before.setdefault(a, set()).add(u))
    for key in ("After", "Before"):
        edges("mmtune.service", key, svc["Unit"].get(key, []))
        edges("dev-vdb.swap", key, swap["Unit"].get(key, []))
    if any(v in ("yes", "true", "1") for v in hard["Service"].get("PrivateTmp", []) +
           svc["Service"].get("PrivateTmp", [])):
        edges("mmtune.service", "After", ["tmp.mount"])
    # A swap unit, and tmp.mount as systemd orders a tmpfs mount.
    edges("dev-vdb.swap", "Before", ["swap.target"])
    edges("tmp.mount", "After", ["swap.target"])
    edges("tmp.mount", "Before", ["local-fs.target"])

    def path(a, b, seen=()):
        if a == b:
            return [a]
        for n in sorted(before.get(a, ())):
            if n not in seen:
                p = path(n, b, seen + (n,))
                if p:
                    return [a] + p
        return None
    cycle = path("tmp.mount", "mmtune.service")
    assert not (cycle and path("mmtune.service", "tmp.mount")), \
        "ordering cycle: %s, then back: %s" % (" < ".join(cycle), " < ".join(path("mmtune.service", "tmp.mount")))


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="no systemd-analyze")
def test_systemd_finds_no_ordering_cycle(tmp_path):
    """The same question asked of systemd itself: a unit directory with our
    units as installed, a swap unit with swap.d/50-mmtune.conf, a tmpfs
    /tmp (Debian 13) and /opt as a disk mount of its own, all wanted at
    boot; "systemd-analyze verify sysinit.target" reports the cycle
    ("Found ordering cycle") on the units before the Debian 13 fix."""
    u = tmp_path / "units"
    (u / "mmtune.service.d").mkdir(parents=True)
    (u / "dev-vdb.swap.d").mkdir()
    shutil.copy(os.path.join(UNITS, "mmtune.service"), u)
    for f in os.listdir(os.path.join(UNITS, "mmtune.service.d")):
        shutil.copy(os.path.join(UNITS, "mmtune.service.d", f), u / "mmtune.service.d")
    shutil.copy(os.path.join(UNITS, "swap.d", "50-mmtune.conf"), u / "dev-vdb.swap.d")
    (u / "dev-vdb.swap").write_text("[Swap]\nWhat=/dev/vdb\n")
    (u / "tmp.mount").write_text("[Mount]\nWhat=tmpfs\nWhere=/tmp\nType=tmpfs\n")
    (u / "opt.mount").write_text("[Mount]\nWhat=/dev/vdc\nWhere=/opt\nType=ext4\n")
    for target, unit_name in (("sysinit", "mmtune.service"), ("swap", "dev-vdb.swap"),
                              ("local-fs", "tmp.mount"), ("local-fs", "opt.mount")):
        (u / (target + ".target.wants")).mkdir(exist_ok=True)
        os.symlink("../" + unit_name, u / (target + ".target.wants") / unit_name)
    env = dict(os.environ, SYSTEMD_UNIT_PATH=str(u) + ":", SYSTEMD_LOG_LEVEL="info")
    r = subprocess.run(["systemd-analyze", "verify", "sysinit.target"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert "ordering cycle" not in r.stderr + r.stdout, r.stderr


def test_hardening_makes_every_knob_writable_and_nothing_else():
    h = unit("mmtune.service.d/50-hardening.conf")["Service"]
    assert h["ProtectSystem"] == ["strict"] and h["ProtectKernelTunables"] == ["yes"]
    assert h["PrivateNetwork"] == ["yes"] and h["RestrictAddressFamilies"] == ["AF_UNIX"]
    rw = [p.lstrip("-") for v in h["ReadWritePaths"] for p in v.split()]
    for k in schema.KNOBS:
        assert any(("/" + k.path).startswith(p + "/") for p in rw), k.path
    # State and lock: RuntimeDirectory= is writable under ProtectSystem=strict.
    assert unit("mmtune.service")["Service"]["RuntimeDirectory"] == ["mmtune"]


def verdict(line):
    """"→ Overall exposure level for X: 1.4 OK 🙂" -> "1.4 OK"."""
    return " ".join(line.split(":")[1].split()[:2])


def security(staged, name):
    p = subprocess.run(["systemd-analyze", "security", "--offline=true", "--root=" + staged, name],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    line = [l for l in p.stdout.splitlines() if "Overall exposure level" in l]
    assert line, p.stdout
    return float(line[0].split(":")[1].split()[0]), line[0]


@pytest.mark.skipif(not os.path.exists("/usr/bin/systemd-analyze"), reason="no systemd-analyze")
def test_systemd_analyze_security_score(tmp_path, diag):
    staged = str(tmp_path)
    subprocess.run(["make", "-s", "-C", fakeroot.SYSTEMD, "install", "DESTDIR=" + staged],
                   check=True)
    hardened, line = security(staged, "mmtune.service")
    metrics, mline = security(staged, "mmtune-metrics.service")
    reapply, rline = security(staged, "mmtune-reapply.service")
    os.unlink(os.path.join(staged, "usr/lib/systemd/system/mmtune.service.d/50-hardening.conf"))
    plain, pline = security(staged, "mmtune.service")
    diag("systemd-analyze security mmtune.service: %s with the hardening drop-in, %s without"
         % (verdict(line), verdict(pline)))
    diag("systemd-analyze security mmtune-metrics.service: %s" % verdict(mline))
    diag("systemd-analyze security mmtune-reapply.service: %s" % verdict(rline))
    assert hardened <= 2.0 and metrics <= 2.0 and reapply <= 2.0 and plain >= 9.0


@pytest.mark.skipif(not os.path.exists("/usr/bin/systemd-analyze"), reason="no systemd-analyze")
def test_security_scores_are_in_the_tap_output():
    """The scores are the evidence for the hardening (issue 16, point 2):
    they must reach the suite's output, not pytest's capture."""
    test = "tests/userspace/test_safety.py::test_systemd_analyze_security_score"
    p = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", test],
                       cwd=fakeroot.REPO, env=dict(os.environ, MMTUNE_TAP="inner"),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True)
    assert p.returncode == 0, p.stdout
    num = r"\d+\.\d [A-Z]+"
    assert re.search(r"^ok 1 inner test_safety.py::test_systemd_analyze_security_score\n"
                     r"# systemd-analyze security mmtune.service: %s with the hardening "
                     r"drop-in, %s without\n"
                     r"# systemd-analyze security mmtune-metrics.service: %s\n"
                     r"# systemd-analyze security mmtune-reapply.service: %s$" % (num, num, num, num),
                     p.stdout, re.M), p.stdout


@pytest.mark.parametrize("err", [errno.EINVAL, errno.EBUSY])
def test_an_optional_knob_the_kernel_refuses_is_skipped(root, run, monkeypatch, err):
    fakeroot.add_all_features(root)
    monkeypatch.setattr(Context, "write_raw",
                        fakeroot.failing_writer("sys/kernel/mm/mmtune/swap_slots/enabled", err))
    rc, out, err_text = run("apply", "balanced")
    assert rc == 0, err_text
    assert err_text == (
        "warning: mmtune.swap_slots.enabled: the kernel refused '1' "
        "(/sys/kernel/mm/mmtune/swap_slots/enabled): %s; optional in "
        "/usr/lib/mmtune/profiles/balanced.conf:35, skipped\n" % os.strerror(err))
    assert out.splitlines()[-1].endswith(", 1 refused")
    assert fakeroot.read(root, SWAPPINESS) == "60"
    assert fakeroot.read(root, "sys/kernel/mm/mmtune/swap_slots/cache_size") == "64"
    assert fakeroot.read(root, "sys/kernel/mm/mmtune/zswap_large/enabled") == "1"
    assert fakeroot.read(root, "sys/kernel/mm/transparent_hugepage/enabled") == "always [madvise] never"
    doc = json.loads(run("status", "--json")[1])
    assert doc["applied"]["refused_knobs"] == ["mmtune.swap_slots.enabled"]
    assert doc["last_apply"]["refused"] == ["mmtune.swap_slots.enabled"]


def test_an_optional_knob_the_kernel_does_not_keep_is_put_back(root, run, monkeypatch):
    fakeroot.add_all_features(root)
    real = Context.write_raw

    def clamp(self, rel, value):        # the kernel takes the write but keeps 1024
        real(self, rel, "1024" if rel.endswith("swap_slots/cache_size") and value != "64" else value)
    monkeypatch.setattr(Context, "write_raw", clamp)
    rc, out, err = run("apply", "batch-throughput")
    assert rc == 0
    assert "warning: mmtune.swap_slots.cache_size: the kernel refused '256'" in err
    assert fakeroot.read(root, "sys/kernel/mm/mmtune/swap_slots/cache_size") == "64"


def test_a_required_knob_the_kernel_refuses_still_restores_everything(root, run, monkeypatch):
    fakeroot.add_all_features(root)
    before = fakeroot.snapshot(root)
    monkeypatch.setattr(Context, "write_raw", fakeroot.failing_writer("sys/module/zswap/parameters/zpool", errno.EBUSY))
    rc, out, err = run("apply", "balanced")
    assert rc == 2
    assert fakeroot.snapshot(root) == before
