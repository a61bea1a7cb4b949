"""Fixtures for the mmtunectl tests, golden files, and TAP output.

With MMTUNE_TAP=PREFIX in the environment every test result is also printed
as a TAP line ("ok N PREFIX test_x.py::name", "not ok ...", "# SKIP"), so
that tests/run-all.sh counts them; Debian 12 has no pytest-tap package.
"""

import difflib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "..", "systemd"))

import fakeroot  # noqa: E402
from mmtunectl import cli  # noqa: E402
from mmtunectl.context import Context  # noqa: E402

GOLDEN = os.path.join(HERE, "golden")


@pytest.fixture
def root(tmp_path):
    return fakeroot.make(str(tmp_path / "root"))


@pytest.fixture
def run(root, capsys, monkeypatch):
    """run(*args, euid=0, virt=None) -> (exit code, stdout, stderr)."""
    monkeypatch.setattr(Context, "write_raw", fakeroot.kernel_write)
    def _run(*args, **kw):
        virt = kw.pop("virt", None)
        detect = os.path.join(root, "detect-virt")
        if virt is None:
            detect = os.path.join(root, "no-such-systemd-detect-virt")
        else:
            with open(detect, "w") as f:
                f.write("#!/bin/sh\necho %s\n[ %s != none ]\n" % (virt, virt))
            os.chmod(detect, 0o755)
        kw.setdefault("euid", 0)
        kw.setdefault("now", lambda: "2026-01-01T00:00:00Z")
        kw.setdefault("clock", lambda: 1767225600.0)
        kw.setdefault("uid", kw["euid"])
        capsys.readouterr()
        rc = cli.main(["--root", root] + list(args), detect_virt=detect, **kw)
        out, err = capsys.readouterr()
        return rc, out, err
    return _run


def golden(name, text):
    """Compare text with golden/NAME; MMTUNE_UPDATE_GOLDEN=1 rewrites it."""
    path = os.path.join(GOLDEN, name)
    if os.environ.get("MMTUNE_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
        return
    with open(path) as f:
        want = f.read()
    if text != want:
        diff = "".join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                            "golden/" + name, "actual"))
        pytest.fail("output differs from golden/%s (MMTUNE_UPDATE_GOLDEN=1 to accept):\n%s"
                    % (name, diff))


# --- TAP -------------------------------------------------------------------
_tap = {"n": 0}


def pytest_runtest_logreport(report):
    prefix = os.environ.get("MMTUNE_TAP")
    if prefix is None:
        return
    name = "%s %s" % (prefix, report.nodeid.split("/")[-1])
    line = None
    if report.when == "call" or (report.when == "setup" and not report.passed):
        _tap["n"] += 1
        if report.passed:
            line = "ok %d %s" % (_tap["n"], name)
        elif report.skipped:
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else ""
            line = "ok %d %s # SKIP %s" % (_tap["n"], name, reason)
        else:
            line = "not ok %d %s" % (_tap["n"], name)
    elif report.when == "teardown" and report.failed:
        _tap["n"] += 1
        line = "not ok %d %s (teardown)" % (_tap["n"], name)
    if line:
        # Straight to the real stdout: pytest's capture and its own
        # progress output must not split the line.
        sys.__stdout__.write("\n" + line + "\n")
        sys.__stdout__.flush()
