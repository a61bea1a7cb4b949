"""dirty_ratio/dirty_bytes and dirty_background_ratio/dirty_background_bytes
are one kernel setting each (issue 28, point 1): writing one form zeroes the
other (mm/page-writeback.c), so mmtune saves, applies, verifies and restores
the form in use, and never leaves both at 0."""

import os
import re

import pytest

import fakeroot
from mmtunectl.context import Context

VM = "proc/sys/vm/"


def dirty(root):
    return dict((f, fakeroot.read(root, VM + f)) for f in (
        "dirty_ratio", "dirty_bytes", "dirty_background_ratio", "dirty_background_bytes"))


BYTES_MODE = {"dirty_ratio": "0", "dirty_bytes": "536870912",
              "dirty_background_ratio": "0", "dirty_background_bytes": "134217728"}
RATIO_MODE = {"dirty_ratio": "20", "dirty_bytes": "0",
              "dirty_background_ratio": "10", "dirty_background_bytes": "0"}


def exec_stop(root):
    """What `systemctl stop mmtune.service` runs (package removal stops the
    unit too: dh_installsystemd's prerm, %systemd_preun)."""
    unit = open(os.path.join(fakeroot.SYSTEMD, "units", "mmtune.service")).read()
    return re.search(r"^ExecStop=/usr/sbin/mmtunectl (.*)$", unit, re.M).group(1).split()


@pytest.mark.parametrize("start", ["bytes", "ratio"])
@pytest.mark.parametrize("undo", ["rollback", "stop", "switch"])
def test_the_mode_found_is_the_mode_restored(root, run, start, undo):
    found = BYTES_MODE if start == "bytes" else RATIO_MODE
    fakeroot.write(root, "etc/mmtune/profile", "database\n")      # selected, so verify can pass
    for f, v in found.items():
        fakeroot.write(root, VM + f, v)
    rc, out, err = run("apply", "database")
    assert (rc, err) == (0, "")
    assert dirty(root) == {"dirty_ratio": "10", "dirty_bytes": "0",
                           "dirty_background_ratio": "3", "dirty_background_bytes": "0"}
    if start == "bytes":
        assert "set sysctl.vm.dirty_ratio = 10 (was sysctl.vm.dirty_bytes = 536870912)\n" in out
    else:
        assert "set sysctl.vm.dirty_ratio = 10 (was 20)\n" in out
    assert run("verify")[0] == 0
    if undo == "switch":
        rc, out, err = run("apply", "balanced")       # sets neither form
    else:
        rc, out, err = run(*(["rollback"] if undo == "rollback" else exec_stop(root)))
    assert (rc, err) == (0, "")
    assert dirty(root) == found
    if start == "bytes":
        assert re.search(r"restored sysctl.vm.dirty_bytes = 536870912 "
                         r"\((was sysctl.vm.dirty_ratio = 10|not in this profile)\)\n", out)
        assert "dirty_ratio = 0" not in out


def test_a_profile_may_set_the_bytes_form(root, run):
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-bytes.conf",
                   "[sysctl]\nvm.dirty_bytes = 268435456\n")
    rc, out, err = run("show", "database")
    assert "sysctl.vm.dirty_ratio" not in out            # the later form wins
    rc, out, err = run("apply", "database")
    assert (rc, err) == (0, "")
    assert "set sysctl.vm.dirty_bytes = 268435456 (was sysctl.vm.dirty_ratio = 20)\n" in out
    assert dirty(root)["dirty_ratio"] == "0" and dirty(root)["dirty_bytes"] == "268435456"
    assert run("rollback")[0] == 0
    assert dirty(root) == RATIO_MODE


def test_verify_sees_the_other_form_in_use(root, run):
    assert run("apply", "database")[0] == 0
    fakeroot.write(root, VM + "dirty_bytes", "536870912")     # an admin, by hand
    fakeroot.write(root, VM + "dirty_ratio", "0")
    rc, out, err = run("verify")
    assert rc == 1
    assert ("drift: sysctl.vm.dirty_ratio: wanted 10, live 0 "
            "(/usr/lib/mmtune/profiles/database.conf:20); the kernel uses "
            "sysctl.vm.dirty_bytes = 536870912\n") in out


def test_a_failed_apply_puts_the_bytes_form_back(root, run, monkeypatch):
    for f, v in BYTES_MODE.items():
        fakeroot.write(root, VM + f, v)
    real = fakeroot.kernel_write

    def refuse_thp(self, rel, value):
        if rel.endswith("transparent_hugepage/enabled"):
            raise OSError(22, "Invalid argument")
        real(self, rel, value)
    monkeypatch.setattr(Context, "write_raw", refuse_thp)
    rc, out, err = run("apply", "database")
    assert rc == 2 and "restored 4 knob(s) written before the failure" in err
    assert dirty(root) == BYTES_MODE


def test_both_forms_in_one_file_is_an_error(root, run):
    fakeroot.write(root, "etc/mmtune/profiles/x.conf",
                   "[sysctl]\nvm.dirty_ratio = 10\nvm.dirty_bytes = 268435456\n")
    rc, out, err = run("check", os.path.join(root, "etc/mmtune/profiles/x.conf"))
    assert rc == 2
    assert ("x.conf:3: sysctl.vm.dirty_bytes and sysctl.vm.dirty_ratio (line 2) are one "
            "kernel setting: set one of them\n") in err
