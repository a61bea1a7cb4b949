"""Health that cannot be mistaken (issue 28, point 7): an internal error has
its own exit status and reaches the metrics; sysctl.d values a profile
overrides are named; sudo's user is in the audit record; metric names."""

import json
import os
import re

import pytest

import fakeroot
from mmtunectl import cli, engine, health, metrics


def boom(*a, **kw):
    raise KeyError("boom")


def test_an_internal_error_is_exit_7_and_reaches_the_metrics(root, run, monkeypatch, tmp_path):
    monkeypatch.setattr(engine, "make_plan", boom)
    rc, out, err = run("apply", "database")
    assert rc == 7
    assert "error: internal error in mmtunectl apply: KeyError: 'boom' (exit 7; please report it)" in err
    assert "Traceback" in err
    doc = json.loads(fakeroot.read(root, "run/mmtune/last-run.json"))
    assert (doc["command"], doc["exit_status"]) == ("apply", 7)
    monkeypatch.undo()
    rc, out, err = run("status", "--prometheus")
    assert "mmtune_last_run_error 1\n" in out
    assert 'mmtune_last_run_exit_status{command="apply"} 7\n' in out
    assert "mmtune_last_run_timestamp_seconds 1767225600.0\n" in out
    # The metrics run itself fails: the file says so, it is not left stale.
    prom = tmp_path / "mmtune.prom"
    assert run("status", "--prometheus", "--output", str(prom))[0] == 0
    monkeypatch.setattr(health, "evaluate", boom)
    rc, out, err = run("status", "--prometheus", "--output", str(prom))
    assert rc == 7
    text = prom.read_text()
    assert "mmtune_ok 0\n" in text and "mmtune_health_status 7\n" in text
    assert "mmtune_last_run_error 1\n" in text
    assert re.search(r"^mmtune_last_run_timestamp_seconds \d", text, re.M)
    # A clean apply clears it.
    monkeypatch.undo()
    assert run("apply", "database")[0] == 0
    assert "mmtune_last_run_error 0\n" in run("status", "--prometheus")[1]


def test_sysctl_d_values_the_profile_overrides_are_named(root, run):
    fakeroot.write(root, "usr/lib/sysctl.d/50-pid-max.conf", "kernel.pid_max = 4194304\n")
    fakeroot.write(root, "etc/sysctl.d/99-local.conf",
                   "# site\nvm.swappiness = 30\nvm.dirty_bytes = 536870912\n")
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    rc, out, err = run("diff")
    assert ("note: sysctl.vm.swappiness: /etc/sysctl.d/99-local.conf:2 sets 30 at boot; the "
            "profile's 10 wins (mmtune.service runs after systemd-sysctl.service; "
            "`sysctl --system` would put it back)\n") in out
    assert ("note: sysctl.vm.dirty_ratio: /etc/sysctl.d/99-local.conf:3 sets "
            "sysctl.vm.dirty_bytes = 536870912 at boot; the profile's 10 wins") in out
    assert run("apply", "--auto")[0] == 0
    rc, out, err = run("status")
    assert ("note: sysctl.vm.swappiness: /etc/sysctl.d/99-local.conf:2 sets 30 at boot; the "
            "profile's 10 wins (mmtune.service runs after systemd-sysctl.service)\n") in out
    doc = json.loads(run("status", "--json")[1])
    assert doc["sysctl_d_overridden"][0] == {"knob": "sysctl.vm.swappiness", "value": "30",
                                             "origin": "/etc/sysctl.d/99-local.conf:2",
                                             "wanted": "10"}
    # The same name in /etc hides the vendor's file (sysctl.d(5)).
    fakeroot.write(root, "etc/sysctl.d/99-local.conf", "vm.swappiness = 10\n")
    assert "note: " not in run("status")[1]


def test_sudo_uid_is_the_audit_uid(root, monkeypatch):
    monkeypatch.setenv("SUDO_UID", "1000")
    monkeypatch.setattr(cli.Context, "write_raw", fakeroot.kernel_write)
    assert cli.main(["--root", root, "apply", "database"], euid=0) == 0
    doc = json.loads(fakeroot.read(root, "run/mmtune/last-apply.json"))
    assert doc["uid"] == (1000 if os.getuid() == 0 else os.getuid())


def test_counter_names_follow_prometheus_units(root, run):
    fakeroot.add_all_features(root)
    rc, out, err = run("status", "--prometheus")
    assert "mmtune_split_zero_not_written_bytes_total 0\n" in out
    assert "bytes_not_written_total" not in out
    assert "mmtune_zswap_large_thp_stored_total 0\n" in out
    readme = open(os.path.join(fakeroot.SYSTEMD, "README.md")).read()
    for name in re.findall(r"`(mmtune_[a-z_]+_total)`", readme):
        assert name in out, name
