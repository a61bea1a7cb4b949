"""Observability and audit (issue 16, points 6 and 7): status --prometheus
checked against the Prometheus text-format rules (and parsed by
prometheus_client from the tools venv), atomic textfile output, one journal
entry per apply/rollback with priority, uid, profile and before -> after,
priorities on journal streams, the version, and no MMTUNE_ROOT in the
installed binary."""

import json
import os
import re
import socket
import struct
import subprocess
import sys

import pytest
from conftest import needs_tools, prometheus_families, refused

import fakeroot
from mmtunectl import journal as mmtune_journal
from mmtunectl.context import Context

SWAPPINESS = "proc/sys/vm/swappiness"

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(r"^(%s)(\{%s(?:,%s)*\})? (\S+)$" % (NAME, LABEL, LABEL))


def check_exposition(text):
    """The text format's rules (prometheus.io/docs/instrumenting/exposition_formats):
    returns {family: (type, [(labels, value)])}."""
    assert text.endswith("\n") and "\n\n" not in text
    fams, current, seen = {}, None, set()
    for line in text[:-1].split("\n"):
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert re.match("^%s$" % NAME, name), line
            assert name not in fams, "family %s twice (families must not interleave)" % name
            fams[name] = [None, []]
            current = name
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert name == current and fams[name][0] is None and not fams[name][1], line
            assert kind in ("counter", "gauge"), line
            fams[name][0] = kind
        else:
            m = SAMPLE.match(line)
            assert m, "not a sample line: %r" % line
            name, labels, value = m.groups()
            assert name == current, "sample of %s outside its family" % name
            float(value)
            assert (name, labels) not in seen, "duplicate series " + line
            seen.add((name, labels))
            fams[name][1].append((labels or "", float(value)))
    for name, (kind, samples) in fams.items():
        assert kind and samples, name
        assert name.endswith("_total") == (kind == "counter"), name
    return dict((k, (v[0], v[1])) for k, v in fams.items())


def test_prometheus_output_follows_the_text_format(root, run):
    fakeroot.add_all_features(root)
    fakeroot.write(root, "sys/kernel/mm/mmtune/pcp_high/refill_calls", "41")
    fakeroot.write(root, "sys/kernel/mm/mmtune/features",
                   'swap_slots on\nthp_swap off\nwe"ird\\ off')
    assert run("apply", "database")[0] == 0
    fakeroot.write(root, SWAPPINESS, "33")
    rc, out, err = run("status", "--prometheus")
    assert (rc, err) == (0, "")
    fams = check_exposition(out)
    assert fams["mmtune_ok"] == ("gauge", [("", 0.0)])
    assert fams["mmtune_health_status"] == ("gauge", [("", 1.0)])
    assert fams["mmtune_apply_success"] == ("gauge", [("", 1.0)])
    assert fams["mmtune_apply_timestamp_seconds"] == ("gauge", [("", 1767225600.0)])
    drift = dict(fams["mmtune_knob_drift"][1])
    assert drift['{knob="sysctl.vm.swappiness"}'] == 1.0
    assert drift['{knob="thp.enabled"}'] == 0.0
    assert fams["mmtune_pcp_high_refill_calls_total"] == ("counter", [("", 41.0)])
    assert fams["mmtune_swap_slots_active"] == ("gauge", [("", 0.0)])
    # Every counter of every feature: one family each.
    counters = [r for r in fakeroot.table() if r["type"] == "counter"]
    assert len([f for f in fams if f.endswith("_total")]) == len(counters)
    assert '{feature="we\\"ird\\\\"}' in dict(fams["mmtune_feature_on"][1])


def test_a_feature_the_kernel_line_does_not_offer_is_not_available(root, run):
    """6.12's features file: not-offered and unavailable are both 0."""
    fakeroot.add_all_features(root)
    fakeroot.write(root, "sys/kernel/mm/mmtune/features",
                   "swap_slots not-offered\nthp_swap on\nsplit_zero not-offered\n"
                   "zswap_large off\npcp_high unavailable")
    rc, out, err = run("status", "--prometheus")
    assert (rc, err) == (0, "")
    fams = check_exposition(out)
    assert dict(fams["mmtune_feature_available"][1]) == {
        '{feature="swap_slots"}': 0.0, '{feature="thp_swap"}': 1.0, '{feature="split_zero"}': 0.0,
        '{feature="zswap_large"}': 1.0, '{feature="pcp_high"}': 0.0}
    assert dict(fams["mmtune_feature_on"][1])['{feature="thp_swap"}'] == 1.0


def test_prometheus_without_an_apply_and_without_the_module(root, run):
    import shutil
    shutil.rmtree(os.path.join(root, "sys/kernel/mm/mmtune"))
    rc, out, err = run("status", "--prometheus")
    assert rc == 0              # the health is in the metrics, not the exit status
    fams = check_exposition(out)
    assert fams["mmtune_apply_success"] == ("gauge", [("", 0.0)])
    assert "mmtune_apply_timestamp_seconds" not in fams
    assert fams["mmtune_module_loaded"] == ("gauge", [("", 0.0)])
    assert fams["mmtune_health_status"] == ("gauge", [("", 3.0)])


@needs_tools
def test_prometheus_client_parses_it(root, run):
    fakeroot.add_all_features(root)
    assert run("apply", "balanced")[0] == 0
    fams = prometheus_families(run("status", "--prometheus")[1])
    assert fams["mmtune_zswap_large_thp_stored"][0] == "counter"       # the parser drops _total
    assert fams["mmtune_zswap_large_thp_stored"][1] == [["mmtune_zswap_large_thp_stored_total", {}, 0.0]]
    assert fams["mmtune_apply_success"][1][0][2] == 1.0
    assert fams["mmtune_ok"][1][0][2] == 1.0


def test_textfile_is_written_atomically(root, run, tmp_path, monkeypatch):
    """node_exporter reads the file at any moment: it must see the old or
    the new metrics, whole. So a temporary file in the same directory (same
    filesystem) gets the text and is renamed over the target; a reader that
    opened the old file keeps reading the old one."""
    tmp_path = tmp_path / "textfile"
    tmp_path.mkdir()
    out = tmp_path / "mmtune.prom"
    out.write_text("old\n")
    old_ino = os.stat(str(out)).st_ino
    renames = []

    def spy(real):
        def rename(src, dst, *a, **kw):
            if os.path.abspath(str(dst)) == str(out):
                renames.append((os.path.dirname(os.path.abspath(str(src))),
                                open(str(src)).read(), out.read_text()))
            return real(src, dst, *a, **kw)
        return rename
    monkeypatch.setattr(os, "rename", spy(os.rename))
    monkeypatch.setattr(os, "replace", spy(os.replace))
    with open(str(out)) as reader:
        rc, text, err = run("status", "--prometheus", "--output", str(out))
        assert (rc, text, err) == (0, "", "")
        assert reader.read() == "old\n"                 # the old inode, untouched
    new = out.read_text()
    assert os.stat(str(out)).st_ino != old_ino
    # One rename, from the same directory, of the whole text, over the old file.
    assert renames == [(str(tmp_path), new, "old\n")]
    assert os.listdir(str(tmp_path)) == ["mmtune.prom"]
    assert oct(os.stat(str(out)).st_mode & 0o777) == "0o644"
    check_exposition(out.read_text())
    rc, text, err = run("status", "--prometheus", "--output", str(tmp_path / "no/such/dir.prom"))
    assert rc == 2 and "cannot write" in err
    assert run("status", "--output", str(out))[0] == 2


def test_metrics_units():
    units = os.path.join(fakeroot.SYSTEMD, "units")
    svc = open(os.path.join(units, "mmtune-metrics.service")).read()
    assert "ExecStart=/usr/sbin/mmtunectl status --prometheus --output ${MMTUNE_TEXTFILE}" in svc
    assert "ReadWritePaths=/var/lib/prometheus/node-exporter\n" in svc
    timer = open(os.path.join(units, "mmtune-metrics.timer")).read()
    assert "OnUnitActiveSec=1min" in timer and "WantedBy=timers.target" in timer


# --- journal -----------------------------------------------------------------

def parse_native(data):
    """journald's native protocol, as journal.send() writes it."""
    out = {}
    while data:
        nl = data.index(b"\n")
        line = data[:nl]
        if b"=" in line:
            k, v = line.split(b"=", 1)
            data = data[nl + 1:]
        else:
            k = line
            n = struct.unpack("<Q", data[nl + 1:nl + 9])[0]
            v = data[nl + 9:nl + 9 + n]
            data = data[nl + 10 + n:]
        out[k.decode()] = v.decode()
    return out


@pytest.fixture
def journal(root):
    os.makedirs(os.path.join(root, "run/systemd/journal"))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(os.path.join(root, "run/systemd/journal/socket"))
    s.settimeout(0.5)

    def entries():
        out = []
        while True:
            try:
                out.append(parse_native(s.recv(1 << 20)))
            except socket.timeout:
                return out
    yield entries
    s.close()


def test_each_apply_and_rollback_writes_one_journal_entry(root, run, journal):
    assert run("apply", "database", euid=0, uid=1000)[0] == 0     # sudo from uid 1000
    e, = journal()
    assert e["PRIORITY"] == "5" and e["SYSLOG_IDENTIFIER"] == "mmtunectl"
    assert (e["MMTUNE_ACTION"], e["MMTUNE_PROFILE"], e["MMTUNE_UID"], e["MMTUNE_RESULT"]) == (
        "apply", "database", "1000", "success")
    assert e["MESSAGE"].startswith("apply profile database by uid 1000: 10 changed: "
                                   "sysctl.vm.swappiness 60->10, ")
    assert "sysctl.vm.swappiness 60 -> 10" in e["MMTUNE_CHANGES"].splitlines()
    assert run("apply", "database")[0] == 0
    e, = journal()
    assert e["MESSAGE"] == "apply profile database by uid 0: 0 changed"
    assert run("rollback")[0] == 0
    e, = journal()
    assert (e["PRIORITY"], e["MMTUNE_ACTION"]) == ("5", "rollback")
    assert "sysctl.vm.swappiness 10->60" in e["MESSAGE"]


def test_failures_are_logged_with_error_priority(root, run, journal, monkeypatch):
    fakeroot.write(root, "etc/mmtune/profiles/bad.conf", "[sysctl]\nvm.swappiness = 500\n")
    refused(root, run, "apply", "bad")
    e, = journal()
    assert (e["PRIORITY"], e["MMTUNE_RESULT"]) == ("3", "failed")
    assert "/etc/mmtune/profiles/bad.conf:2: sysctl.vm.swappiness: 500 is out of range" in e["MESSAGE"]


def test_failed_reload_keeps_the_previous_values_and_says_so(root, run, journal, monkeypatch):
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    assert run("apply", "--auto")[0] == 0
    journal()
    state = open(os.path.join(root, "run/mmtune/state.json")).read()
    fakeroot.write(root, "etc/mmtune/profile", "batch-throughput\n")   # a package upgrade...
    monkeypatch.setattr(Context, "write_raw",                          # ...and a refused write
                        fakeroot.failing_writer("sys/module/zswap/parameters/compressor"))
    refused(root, run, "apply", "--auto", "--reload")
    assert open(os.path.join(root, "run/mmtune/state.json")).read() == state
    e, = journal()
    assert e["PRIORITY"] == "3" and e["MMTUNE_ACTION"] == "re-apply"
    assert e["MESSAGE"] == ("re-apply profile batch-throughput by uid 0 failed: a write failed, "
                            "every knob written before it was restored; the previous values "
                            "are kept")
    doc = json.loads(run("status", "--json")[1])
    assert doc["last_apply"]["success"] is False and doc["applied_profile"] == "database"


def test_a_refused_optional_knob_is_a_warning_in_the_journal(root, run, journal, monkeypatch):
    """The apply succeeds, but `journalctl -t mmtunectl -p warning` must find
    it: its entry and its stderr line have priority warning (4)."""
    fakeroot.add_all_features(root)
    monkeypatch.setattr(Context, "write_raw",
                        fakeroot.failing_writer("sys/kernel/mm/mmtune/swap_slots/enabled", 22))
    monkeypatch.setattr(mmtune_journal, "stream_is_journal", lambda fd: True)
    rc, out, err = run("apply", "balanced")
    assert rc == 0, err
    assert err == ("<4>warning: mmtune.swap_slots.enabled: the kernel refused '1' "
                   "(/sys/kernel/mm/mmtune/swap_slots/enabled): Invalid argument; optional in "
                   "/usr/lib/mmtune/profiles/balanced.conf:35, skipped\n")
    assert all(l.startswith("<6>") for l in out.splitlines()), out
    e, = journal()
    assert (e["PRIORITY"], e["MMTUNE_ACTION"], e["MMTUNE_RESULT"], e["MESSAGE_ID"]) == (
        "4", "apply", "success", mmtune_journal.MESSAGE_IDS[("apply", True)])
    assert e["MESSAGE"].startswith("apply profile balanced by uid 0: ")
    assert e["MESSAGE"].endswith(
        "; 1 optional refused: mmtune.swap_slots.enabled (Invalid argument)")
    assert "mmtune.swap_slots.enabled" not in e["MMTUNE_CHANGES"]


def test_a_failed_rollback_is_logged_with_error_priority(root, run, journal, monkeypatch):
    assert run("apply", "database", euid=0, uid=1000)[0] == 0
    journal()
    applied = fakeroot.snapshot(root)
    state = open(os.path.join(root, "run/mmtune/state.json")).read()
    monkeypatch.setattr(Context, "write_raw", fakeroot.failing_writer(SWAPPINESS, 1))
    monkeypatch.setattr(mmtune_journal, "stream_is_journal", lambda fd: True)
    rc, out, err = run("rollback", euid=0, uid=1000)
    assert rc == 2
    assert "<3>error: writing '60' to /proc/sys/vm/swappiness (sysctl.vm.swappiness, " \
        "saved original) failed: Operation not permitted\n" in err
    assert fakeroot.snapshot(root) == applied                      # nothing rolled back
    assert open(os.path.join(root, "run/mmtune/state.json")).read() == state
    e, = journal()
    assert (e["PRIORITY"], e["MMTUNE_ACTION"], e["MMTUNE_PROFILE"], e["MMTUNE_UID"],
            e["MMTUNE_RESULT"], e["MESSAGE_ID"]) == (
        "3", "rollback", "database", "1000", "failed",
        mmtune_journal.MESSAGE_IDS[("rollback", False)])
    assert e["MESSAGE"] == ("rollback profile database by uid 1000 failed: a write failed, "
                            "every knob written before it was restored; nothing rolled back")


def installed(tmp_path):
    dest = str(tmp_path / "inst")
    subprocess.run(["make", "-s", "-C", fakeroot.SYSTEMD, "install", "PREFIX=" + dest + "/usr",
                    "SYSCONFDIR=" + dest + "/etc", "PYDIR=" + dest + "/py"], check=True)
    return os.path.join(dest, "usr/sbin/mmtunectl")


def test_priorities_on_the_journal_stream(root, tmp_path):
    ctl = installed(tmp_path)
    fakeroot.write(root, "etc/mmtune/profiles/bad.conf", "[sysctl]\nvm.swappiness = 500\n")
    log = tmp_path / "stream"
    with open(str(log), "w") as f:
        st = os.fstat(f.fileno())
        env = dict(os.environ, JOURNAL_STREAM="%d:%d" % (st.st_dev, st.st_ino))
        rc = subprocess.call([ctl, "--root", root, "check", "/no/such.conf", root +
                              "/etc/mmtune/profiles/bad.conf"], stdout=f, stderr=f, env=env)
        assert rc == 2
        subprocess.call([ctl, "--root", root, "recommend"], stdout=f, stderr=f, env=env)
    lines = log.read_text().splitlines()
    assert lines[0] == "<3>error: /no/such.conf: cannot read: No such file or directory"
    assert "<3>error: /etc/mmtune/profiles/bad.conf:2: sysctl.vm.swappiness: 500 is out of range (0..200)" in lines
    assert lines[-2] == "<6>balanced"
    # A terminal or a pipe gets no prefix.
    p = subprocess.run([ctl, "--root", root, "check", "/no/such.conf"], stderr=subprocess.PIPE,
                       universal_newlines=True, env=env)
    assert p.stderr.startswith("error: ")


def test_version_is_the_packages(tmp_path):
    want = subprocess.check_output([os.path.join(fakeroot.REPO, "packaging/version.sh")],
                                   universal_newlines=True).strip()
    from mmtunectl import VERSION
    assert VERSION == want
    out = subprocess.check_output([installed(tmp_path), "--version"], universal_newlines=True)
    assert out == "mmtunectl %s\n" % want


def test_installed_binary_ignores_test_seams(root, tmp_path):
    """MMTUNE_ROOT / MMTUNE_DETECT_VIRT in the environment change nothing."""
    ctl = installed(tmp_path)
    fakeroot.write(root, "etc/mmtune/profiles/only-in-fake-root.conf", "[sysctl]\nvm.swappiness = 1\n")
    env = dict(os.environ, MMTUNE_ROOT=root, MMTUNE_DETECT_VIRT="/bin/false")
    p = subprocess.run([ctl, "show", "only-in-fake-root"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 2 and "no profile 'only-in-fake-root'" in p.stderr
    # The test seam, for development, is a separate script, never installed.
    dev = os.path.join(fakeroot.REPO, "tests/userspace/mmtunectl-dev")
    p = subprocess.run([dev, "show", "only-in-fake-root"], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stderr
    for dirpath, _, files in os.walk(str(tmp_path / "inst")):
        for f in files:
            if f.endswith(".py") or f == "mmtunectl":
                assert "MMTUNE_ROOT" not in open(os.path.join(dirpath, f)).read(), f
