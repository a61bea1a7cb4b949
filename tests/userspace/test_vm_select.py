"""The VM harness's test selection (tests/vm/guest/select.sh), which the
host (run.sh, bash) and the guest (run-tests.sh, busybox sh) share: both
shells choose the same tests, and tests/run-all.sh's two tiers (make
check, make check-vm) and its split of the 6.1 suite into two boots run
every test exactly once."""

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
    ("zswap_large-*", [n for n in NAMES if n.startswith("zswap_large-")]),
    ("thp_swap-split-churn,pcp_high-reclaim-cap",
     [n for n in NAMES if n in ("thp_swap-split-churn", "pcp_high-reclaim-cap")]),
    ("*,!thp_swap-split-churn,!pcp_high-reclaim-cap",
     [n for n in NAMES if n not in ("thp_swap-split-churn", "pcp_high-reclaim-cap")]),
    ("!pcp_high-*", [n for n in NAMES if not n.startswith("pcp_high-")]),
    ("nothing-*", []),
])
def test_selection(shell, spec, want):
    assert chosen(shell, spec) == want


def tier_check():
    """The tests marked "# tier: check", as tests/run-all.sh finds them."""
    return sorted(n for n in NAMES if "# tier: check\n" in open(
        os.path.join(fakeroot.REPO, "tests", "vm", "tests", n + ".sh")).read())


def test_tiers_and_split_run_every_test_once():
    """make check (the check tier) and make check-vm (the rest, lane 1
    without the split, then the split's boot) run every test exactly
    once, as run-all.sh builds their SPECs."""
    text = open(RUN_ALL).read()
    split = re.search(r"^split=\$\{MMTUNE_VM_SPLIT-([^}]*)\}", text, re.M).group(1)
    check = tier_check()
    assert "vm_tier_tests=$(grep -l '^# tier: check$' tests/vm/tests/*.sh" in text
    rest = "*," + ",".join("!" + n for n in check)
    lane1 = chosen(["bash"], rest + "," + ",".join("!" + g for g in split.split(",")))
    second = chosen(["bash"], split)
    assert chosen(["bash"], ",".join(check)) == check
    assert second, "the split moves no test"
    assert not set(second) & set(check), "a split test of the check tier"
    assert sorted(check + lane1 + second) == NAMES


def test_check_tier_covers_every_group():
    """Every group of tests has a test in make check, and no slow test is
    in it (it would only be skipped there)."""
    check = tier_check()
    assert {n.split("-")[0] for n in NAMES} - {"selftests", "campaign", "kmemleak"} <= \
        {n.split("-")[0] for n in check}
    slow = [n for n in check if "\n# slow:" in "\n" + open(
        os.path.join(fakeroot.REPO, "tests", "vm", "tests", n + ".sh")).read()]
    assert slow == []


GROUPS = os.path.join(fakeroot.REPO, "tests", "vm", "guest", "groups")
KNOBS = os.path.join(fakeroot.REPO, "sysfs-docs", "knobs.tsv")


def read_groups():
    groups = {}
    for line in open(GROUPS):
        if line.strip() and not line.startswith("#"):
            name, kind = line.rstrip("\n").split("\t")[:2]
            groups[name] = kind
    return groups


def test_names_follow_groups():
    """Every VM test is GROUP-NAME.sh of a listed group; a "feature"
    group is a feature of knobs.tsv, and every feature has a group with
    at least one test."""
    groups = read_groups()
    features = {l.split("\t")[0] for l in open(KNOBS)
                if not l.startswith(("#", "dir\t")) and not l.startswith(".\t")}
    bad = [n for n in NAMES if not re.fullmatch(r"[a-z0-9_]+-[a-z0-9-]+", n)
           or n.split("-")[0] not in groups]
    assert bad == [], "tests outside tests/vm/guest/groups"
    assert {g for g, k in groups.items() if k == "feature"} == features
    assert {f for f in features if not any(n.startswith(f + "-") for n in NAMES)} == set()


def test_run_order_is_group_order():
    """select.sh's tests_in_order runs group by group as groups lists them,
    core-hooks-idle first and kmemleak-scan last, every test once."""
    d = os.path.join(fakeroot.REPO, "tests", "vm", "tests")
    out = subprocess.run(["bash", "-c", '. "$1"; tests_in_order "$2" "$3"', "sh",
                          SELECT, d, GROUPS], check=True, capture_output=True,
                         text=True).stdout.split()
    order = [os.path.basename(t)[:-3] for t in out]
    assert sorted(order) == NAMES
    assert order[0] == "core-hooks-idle" and order[-1] == "kmemleak-scan"
    rank = {g: i for i, g in enumerate(read_groups())}
    ranks = [rank[n.split("-")[0]] for n in order]
    assert ranks == sorted(ranks)
