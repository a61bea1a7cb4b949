"""[cgroup:...] profile sections: the module's per-cgroup large-folio table
(/sys/kernel/mm/mmtune/cgroup_policy), against a fake cgroup2 tree and a
fake table with the ABI's write semantics (fakeroot.cgroup_policy_write)."""

import errno
import json
import os
import shutil

import pytest

import fakeroot
from conftest import golden, refused
from mmtunectl import cgroups
from mmtunectl.context import Context

POLICY = fakeroot.CG_POLICY
BE = "/kubepods.slice/kubepods-besteffort.slice"
BU = "/kubepods.slice/kubepods-burstable.slice"
PG = "/system.slice/postgresql.service"

# container-host plus a database service of its own, a glob over the
# BestEffort pods and a unit that is not there.
NODE = """[main]
summary = test node
include = container-host

[cgroup:postgresql.service]
thp_swap = whole
thp_swap_16kB = split
zswap_large_2048kB = 0

[cgroup:/kubepods.slice/kubepods-besteffort.slice/*pod*]
zswap_large_64kB = 0

[?cgroup:nosuch.service]
orders = none
"""


@pytest.fixture
def line():
    return "6.12"


@pytest.fixture
def node(root, line):
    fakeroot.cgroup_policy(root, line=line)
    fakeroot.write(root, "etc/mmtune/profiles/node.conf", NODE)
    fakeroot.write(root, "etc/mmtune/profile", "node\n")
    return root


def entries(root):
    return fakeroot.read(root, POLICY + "/entries").splitlines()


def table(root):
    return dict((l.split()[0], l.split()[1:]) for l in entries(root))


def test_apply_writes_one_line_per_cgroup_and_enables(node, run):
    rc, out, err = run("apply", "node")
    assert (rc, err) == (0, "")
    t = table(node)
    assert t[BE] == ["orders=none"] + ["thp_swap_%s=split" % s for s in fakeroot.CG_SIZES["6.12"][1:]] \
        + ["zswap_large_%s=1" % s for s in fakeroot.CG_SIZES["6.12"]]
    assert t[BU] == ["orders=16kB,32kB,64kB"]
    # The per-size key wins over its shorthand; unset sizes follow the host.
    assert t[PG] == ["thp_swap_16kB=split"] + ["thp_swap_%s=whole" % s for s in
                                                fakeroot.CG_SIZES["6.12"][2:]] \
        + ["zswap_large_2048kB=0"]
    pods = sorted(p for p in t if "-pod" in p)
    assert pods == [BE + "/kubepods-besteffort-poda1.slice",
                    BE + "/kubepods-besteffort-podb2.slice"]
    assert all(t[p] == ["zswap_large_64kB=0"] for p in pods)
    assert fakeroot.read(node, POLICY + "/enabled") == "1"
    assert "skip [?cgroup:nosuch.service]: no such cgroup under /sys/fs/cgroup; optional in " \
           "/etc/mmtune/profiles/node.conf:14\n" in out
    assert "; cgroups: 5 entries written, 0 already set\n" in out
    # Applied means the kernel holds it: verify and diff agree.
    rc, out, _ = run("verify")
    assert rc == 0 and "cgroups: 6 match, 0 differ, 1 skipped" in out
    assert run("diff")[0] == 0


def test_diff_check_status_golden(node, run):
    rc, out, err = run("diff", "node")
    assert (rc, err) == (1, "")
    golden("cgroups-diff.txt", out)
    rc, out, err = run("check", "--profile", "node", node + "/etc/mmtune/profiles/node.conf")
    assert (rc, err) == (0, "")
    assert "profile node: ok, 22 knob(s), 5 cgroup section(s)\n" in out
    run("apply", "node")
    fakeroot.write(node, POLICY + "/stats",
                   BE + " fault_narrowed_64kB=12 thp_split_2048kB=3 zswap_stored_2048kB=3\n"
                   + PG + " thp_whole_2048kB=40 zswap_refused_2048kB=40")
    rc, out, err = run("status")
    assert (rc, err) == (0, "")
    golden("cgroups-status.txt", out[out.index("cgroups "):out.index("counters:\n")]
           + out[out.index("health:"):])


def test_rollback_puts_back_every_entry_and_enabled(node, run):
    fakeroot.cgroup_policy_write(node, PG + " orders=2048kB")
    before = fakeroot.snapshot(node)
    assert run("apply", "node")[0] == 0
    assert table(node)[PG] != ["orders=2048kB"]
    rc, out, err = run("rollback")
    assert (rc, err) == (0, "")
    assert "restored cgroup %s: orders=2048kB (was " % PG in out
    assert out.endswith("; cgroups: 5 entries restored, 0 already set\n")
    assert fakeroot.snapshot(node) == before
    assert entries(node) == [PG + " orders=2048kB"]


def test_another_profile_puts_back_the_entries_it_does_not_name(node, run):
    assert run("apply", "node")[0] == 0
    fakeroot.write(node, "etc/mmtune/profiles/node.conf", NODE.replace(
        "[cgroup:postgresql", "[x]\n[nope:postgresql").replace("[x]\n", ""))
    # (the edited file is broken: nothing is applied)
    rc, _, err = run("apply", "node")
    assert rc == 2 and "unknown section [nope:postgresql.service]" in err
    assert PG in table(node)
    fakeroot.write(node, "etc/mmtune/profiles/node.conf",
                   "[main]\ninclude = container-host\n")
    rc, out, err = run("apply", "node")
    assert (rc, err) == (0, "")
    assert "restored cgroup %s: (no entry) (was " % PG in out
    assert sorted(table(node)) == [BE, BU]
    rc, out, _ = run("rollback")
    assert entries(node) == [] and fakeroot.read(node, POLICY + "/enabled") == "0"


@pytest.mark.parametrize("text, error", [
    ("[cgroup:kubepods.slice]\norder = none\n",
     "node.conf:2: [cgroup:kubepods.slice]: unknown key 'order' in a cgroup section "
     "(did you mean 'orders'?)"),
    ("[cgroup:kubepods.slice]\norders = 16kB,64KB\n",
     "node.conf:2: [cgroup:kubepods.slice]: no size '64KB' for orders: one of 16kB 32kB 64kB "
     "128kB 256kB 512kB 1024kB 2048kB (sizes are written in kB: did you mean 64kB?)"),
    ("[cgroup:kubepods.slice]\norders = 8kB\n",
     "node.conf:2: [cgroup:kubepods.slice]: no size '8kB' for orders: one of 16kB"),
    ("[cgroup:kubepods.slice]\nthp_swap_2M = split\n",
     "node.conf:2: [cgroup:kubepods.slice]: no size '2M' for thp_swap_2M: one of 16kB"),
    ("[cgroup:kubepods.slice]\nthp_swap = never\n",
     "node.conf:2: [cgroup:kubepods.slice]: thp_swap: 'never' is not one of "
     "inherit|whole|split|adaptive"),
    ("[cgroup:kubepods.slice]\nzswap_large_64kB = yes\n",
     "node.conf:2: [cgroup:kubepods.slice]: zswap_large_64kB: 'yes' is not 0 or 1"),
    ("[cgroup:kubepods]\norders = none\n",
     "node.conf:2: [cgroup:kubepods]: not a cgroup path (starting with /) nor a unit name"),
    ("[cgroup:/kube pods]\norders = none\n",
     "node.conf:2: [cgroup:/kube pods]: not a cgroup path"),
    ("[cgroup:/kubepods.slice/../system.slice]\norders = none\n",
     "node.conf:2: [cgroup:/kubepods.slice/../system.slice]: not a cgroup path"),
    ("[cgroup:kubepods--x.slice]\norders = none\n",
     "node.conf:2: [cgroup:kubepods--x.slice]: not a valid slice name"),
])
def test_bad_input_is_refused_with_file_and_line_and_changes_nothing(node, run, text, error):
    fakeroot.write(node, "etc/mmtune/profiles/node.conf", text)
    assert error in refused(node, run, "check", "--profile", "node",
                            node + "/etc/mmtune/profiles/node.conf")
    err = refused(node, run, "apply", "node")
    assert error in err and "error: nothing applied" in err


def test_required_cgroup_that_is_not_there_applies_nothing(node, run):
    fakeroot.write(node, "etc/mmtune/profiles/node.conf",
                   "[main]\ninclude = container-host\n[cgroup:nosuch.service]\norders = none\n")
    err = refused(node, run, "apply", "node")
    assert ("error: /etc/mmtune/profiles/node.conf:4: [cgroup:nosuch.service] matches no "
            "cgroup under /sys/fs/cgroup and is not marked optional") in err
    rc, out, _ = run("verify")
    assert rc == 1 and "missing: [cgroup:nosuch.service]: wanted a cgroup, live no such " \
                       "cgroup (/etc/mmtune/profiles/node.conf:4)" in out


def test_unit_names_resolve_by_systemd_rule_and_by_name(node):
    assert cgroups.slice_path("-.slice") == "/"
    assert cgroups.slice_path("a-b-c.slice") == "/a.slice/a-b.slice/a-b-c.slice"
    tree = cgroups.Tree(Context(root=node))
    assert tree.resolve("kubepods-besteffort-poda1.slice") == [
        BE + "/kubepods-besteffort-poda1.slice"]
    assert tree.resolve("kubepods-podd4.slice") == ["/kubepods.slice/kubepods-podd4.slice"]
    assert tree.resolve("-.slice") == ["/"]
    assert tree.resolve("containerd.service") == ["/system.slice/containerd.service"]
    assert tree.resolve("session-*.scope") == ["/user.slice/user-1000.slice/session-3.scope"]
    assert tree.resolve("cri-containerd-*.scope") == [
        BE + "/kubepods-besteffort-poda1.slice/cri-containerd-c1.scope"]
    assert tree.resolve("kubepods-burstable-pod*.slice") == [
        BU + "/kubepods-burstable-podc3.slice"]
    assert tree.resolve("/kubepods.slice/*/*pod*") == [
        BE + "/kubepods-besteffort-poda1.slice", BE + "/kubepods-besteffort-podb2.slice",
        BU + "/kubepods-burstable-podc3.slice"]
    assert tree.resolve("/system.slice/postgresql.service") == [PG]
    # By rule, not by name: a slice elsewhere of the same name is not it.
    assert tree.resolve("nosuch-kubepods.slice") == []


def test_glob_matches_the_cgroups_there_at_apply_time(node, run):
    assert run("apply", "node")[0] == 0
    pod = BE + "/kubepods-besteffort-podnew.slice"
    os.makedirs(node + "/sys/fs/cgroup" + pod)
    # The new pod has no entry: its parent's covers it. verify does not
    # call that drift; the next apply writes the glob's new match.
    assert pod not in table(node)
    rc, out, _ = run("diff")
    assert rc == 1 and "change cgroup %s: (no entry) -> zswap_large_64kB=0" % pod in out


def test_no_cgroup_policy_skips_with_one_line(root, run):
    shutil.rmtree(os.path.join(root, POLICY), ignore_errors=True)     # an older module
    fakeroot.write(root, "etc/mmtune/profiles/node.conf", NODE)
    before = fakeroot.snapshot(root)
    rc, out, err = run("apply", "node")
    assert (rc, err) == (0, "")
    lines = [l for l in out.splitlines() if "cgroup" in l]
    assert lines == [
        "warning: kernel feature cgroup_policy is absent (no /sys/kernel/mm/mmtune/cgroup_policy; "
        "needs a kernel with the mmtune cgroup hooks and mmtune.ko with feature group "
        "cgroup_policy): skipped [?cgroup:kubepods-besteffort.slice], "
        "[?cgroup:kubepods-burstable.slice], [cgroup:postgresql.service], "
        "[cgroup:/kubepods.slice/kubepods-besteffort.slice/*pod*], [?cgroup:nosuch.service]"]
    assert [f for f in fakeroot.snapshot(root) if "cgroup_policy" in f] == []
    assert set(fakeroot.snapshot(root)) == set(before)
    doc = json.loads(run("status", "--json")[1])
    assert set(r["state"] for r in doc["cgroups"]) == {"skipped"}
    assert 'mmtune_kernel_feature_present{feature="mmtune.cgroup_policy"} 0\n' in \
        run("status", "--prometheus")[1]


@pytest.mark.parametrize("line", ["6.1"])
def test_61_has_one_size(node, run):
    assert run("apply", "node")[0] == 0
    t = table(node)
    # orders up to 64kB on a kernel whose only large size is 2M: none.
    assert t[BU] == ["orders=none"]
    assert t[BE] == ["orders=none", "thp_swap_2048kB=split", "zswap_large_2048kB=1"]
    assert t[PG] == ["thp_swap_2048kB=whole", "zswap_large_2048kB=0"]
    rc, out, _ = run("diff")
    assert rc == 0
    assert ("[cgroup:postgresql.service]: thp_swap_16kB: no such size on this kernel "
            "(sizes 2048kB), skipped") in out


@pytest.mark.parametrize("err, limit", [(errno.ENOSPC, 3), (errno.EINVAL, None)])
def test_kernel_refusal_puts_everything_back(node, run, monkeypatch, err, limit):
    fakeroot.cgroup_policy_write(node, PG + " orders=2048kB")
    if limit:
        fakeroot.write(node, POLICY + "/max_entries", str(limit))
    else:
        # The cgroup goes away between the plan and the write.
        real = fakeroot.cgroup_policy_write

        def gone(root, value):
            if value.startswith(BU + " "):
                raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
            return real(root, value)
        monkeypatch.setattr(fakeroot, "cgroup_policy_write", gone)
    err_text = refused(node, run, "apply", "node")
    assert "failed: %s" % os.strerror(err) in err_text
    assert not os.path.exists(node + "/run/mmtune/state.json")


def test_drift_is_reported(node, run):
    run("apply", "node")
    fakeroot.cgroup_policy_write(node, "-" + BU)
    rc, out, _ = run("verify")
    assert rc == 1
    assert ("drift: [?cgroup:kubepods-burstable.slice] %s: wanted orders=16kB,32kB,64kB, live "
            "(no entry) (/usr/lib/mmtune/profiles/container-host.conf:" % BU) in out
    assert 'mmtune_cgroup_policy_drift{cgroup="%s"} 1\n' % BU in run("status", "--prometheus")[1]


def test_metrics_carry_the_cgroup_label(node, run):
    run("apply", "node")
    fakeroot.write(node, POLICY + "/stats",
                   BE + " fault_narrowed_64kB=12 fault_narrowed_2048kB=2 thp_split_2048kB=3\n"
                   + PG + " thp_whole_2048kB=40 zswap_refused_2048kB=40 zswap_stored_64kB=1")
    text = run("status", "--prometheus")[1]
    for sample in [
            'mmtune_cgroup_policy_fault_narrowed_total{cgroup="%s",size="64kB"} 12' % BE,
            'mmtune_cgroup_policy_fault_narrowed_total{cgroup="%s",size="2048kB"} 2' % BE,
            'mmtune_cgroup_policy_thp_split_total{cgroup="%s",size="2048kB"} 3' % BE,
            'mmtune_cgroup_policy_thp_whole_total{cgroup="%s",size="2048kB"} 40' % PG,
            'mmtune_cgroup_policy_zswap_refused_total{cgroup="%s",size="2048kB"} 40' % PG,
            'mmtune_cgroup_policy_zswap_stored_total{cgroup="%s",size="64kB"} 1' % PG,
            'mmtune_cgroup_policy_setting{cgroup="%s",key="orders",size="",value="16kB,32kB,64kB"} 1'
            % BU,
            'mmtune_cgroup_policy_setting{cgroup="%s",key="thp_swap",size="16kB",value="split"} 1'
            % PG,
            'mmtune_cgroup_policy_enabled 1', 'mmtune_cgroup_policy_nr_entries 5',
            'mmtune_cgroup_policy_max_entries 1024',
            'mmtune_cgroup_policy_drift{cgroup="%s"} 0' % PG]:
        assert sample + "\n" in text
    # One HELP/TYPE per family, families not interleaved.
    assert text.count("# TYPE mmtune_cgroup_policy_fault_narrowed_total counter\n") == 1
    # Numbers of the table are gauges, never counters.
    assert "mmtune_cgroup_policy_nr_entries_total" not in text


def test_a_corrupt_cgroup_state_is_an_error_not_a_crash(node, run):
    run("apply", "node")
    path = node + "/run/mmtune/state.json"
    with open(path) as f:
        state = json.load(f)
    assert state["cgroups"]["table"][BU] is None and state["cgroups"]["enabled"] == "0"
    state["cgroups"] = {"table": "oops"}
    with open(path, "w") as f:
        json.dump(state, f)
    before = fakeroot.snapshot(node)
    rc, _, err = run("rollback")
    assert rc == 2 and "unreadable state (cgroups is not an object" in err
    assert fakeroot.snapshot(node) == before


def test_show_lists_the_cgroup_sections_with_their_origins(node, run):
    rc, out, _ = run("show", "node")
    assert rc == 0
    assert ("[cgroup:postgresql.service]\n"
            "  thp_swap                               whole           "
            "# /etc/mmtune/profiles/node.conf:6\n") in out
    assert "[?cgroup:kubepods-burstable.slice]\n  orders " in out
