"""The VM harness's test selection (tests/vm/guest/select.sh), which the
host (run.sh, bash) and the guest (run-tests.sh, busybox sh) share: both
shells choose the same tests, and tests/run-all.sh's split of the 6.1
suite into two boots runs every test exactly once."""

import glob
import os
import re
import shutil
import subprocess

import pytest

import fakeroot

SELECT = os.path.join(fakeroot.REPO, "tests", "vm", "guest", "select.sh")
RUN_ALL = os.path.join(fakeroot.REPO, "tests", "run-all.sh")
NAMES = sorted(os.path.basename(t)[:-3] for t in glob.glob(
    os.path.join(fakeroot.REPO, "tests", "vm", "tests", "*.sh")))


def chosen(shell, spec):
    script = '. "$1"; shift; spec=$1; shift; for n; do test_chosen "$n" "$spec" && echo "$n"; done; :'
    out = subprocess.run(shell + ["-c", script, "sh", SELECT, spec] + NAMES,
                         check=True, capture_output=True, text=True).stdout
    return out.split()


SHELLS = [["bash"]] + ([["busybox", "sh"]] if shutil.which("busybox") else [])


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
@pytest.mark.parametrize("spec,want", [
    ("*", NAMES),
    ("3*", [n for n in NAMES if n.startswith("3")]),
    ("39-*,48-*", [n for n in NAMES if n[:3] in ("39-", "48-")]),
    ("*,!39-*,!48-*", [n for n in NAMES if n[:3] not in ("39-", "48-")]),
    ("!4*", [n for n in NAMES if not n.startswith("4")]),
    ("nothing-*", []),
])
def test_selection(shell, spec, want):
    assert chosen(shell, spec) == want


def test_split_runs_every_test_once():
    """run-all.sh's default split: its two SPECs partition the suite."""
    text = open(RUN_ALL).read()
    split = re.search(r"^split=\$\{MMTUNE_VM_SPLIT-([^}]*)\}", text, re.M).group(1)
    rest = ",".join(["*"] + ["!" + g for g in split.split(",")])
    first, second = chosen(["bash"], rest), chosen(["bash"], split)
    assert second, "the split moves no test"
    assert sorted(first + second) == NAMES
