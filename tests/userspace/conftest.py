"""Fixtures for the mmtunectl tests, golden files, and TAP output.

With MMTUNE_TAP=PREFIX in the environment every test result is also printed
as a TAP line ("ok N PREFIX test_x.py::name", "not ok ...", "# SKIP"), so
that tests/run-all.sh counts them; Debian 12 has no pytest-tap package.
What a test measured (the diag fixture) follows its TAP line as "# text"
lines; without MMTUNE_TAP pytest prints them in a "diagnostics" section.
"""

import difflib
import json
import os
import subprocess
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
def line():
    """The kernel line of the fake root: parametrize "line" to change it."""
    return fakeroot.LINE


@pytest.fixture
def root(tmp_path, line):
    return fakeroot.make(str(tmp_path / "root"), line=line)


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


@pytest.fixture
def diag(record_property):
    """diag(text): report a number the test measured (e.g. a systemd-analyze
    score) as a TAP diagnostic line "# text". It travels in the test's
    report: whatever the test writes itself, pytest's capture swallows."""
    def _diag(text):
        record_property("diag", text)
    return _diag


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


def refused(root, run, *args):
    """run(*args) fails with exit status 2 and changes no knob under root:
    its stderr."""
    before = fakeroot.snapshot(root)
    rc, out, err = run(*args)
    assert rc == 2, err
    assert fakeroot.snapshot(root) == before
    return err


# The tools venv (tests/userspace/venv.sh): linters, ansible, prometheus_client.
TOOLS = os.environ.get("MMTUNE_TOOLS_VENV")
needs_tools = pytest.mark.skipif(
    not TOOLS, reason="MMTUNE_TOOLS_VENV not set (tests/userspace/run.sh sets it)")


def prometheus_families(text):
    """text as prometheus_client's parser reads it:
    {family: (type, [[sample, labels, value], ...])}."""
    p = subprocess.run([os.path.join(TOOLS, "bin/python"), "-c", (
        "import json, sys\n"
        "from prometheus_client.parser import text_string_to_metric_families as parse\n"
        "print(json.dumps([(f.name, f.type, [(s.name, s.labels, s.value) for s in f.samples])"
        " for f in parse(sys.stdin.read())]))\n")],
        input=text, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stderr
    return dict((n, (t, s)) for n, t, s in json.loads(p.stdout))


# --- TAP -------------------------------------------------------------------
_tap = {"n": 0}
_diags = []


def _diag_lines(report):
    return ["# %s" % text for name, text in report.user_properties if name == "diag"]


def pytest_runtest_logreport(report):
    prefix = os.environ.get("MMTUNE_TAP")
    if prefix is None:
        if report.when == "call":
            _diags.extend("%s: %s" % (report.nodeid.split("/")[-1], text)
                          for name, text in report.user_properties if name == "diag")
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
        if report.when == "call":
            line = "\n".join([line] + _diag_lines(report))
        # Straight to the real stdout: pytest's capture and its own
        # progress output must not split the line.
        sys.__stdout__.write("\n" + line + "\n")
        sys.__stdout__.flush()


def pytest_terminal_summary(terminalreporter):
    if _diags:
        terminalreporter.section("diagnostics")
        for line in _diags:
            terminalreporter.write_line(line)
