"""Per-size (mTHP) knobs and kernel lines (issue 30, item 3): a 6.12 fake
root with hugepages-<size>kB directories and the module's 6.12 files, a 6.1
fake root where the same profiles apply with one skip line; status, JSON
and metrics per size; bad per-size input named with file and line and
nothing applied."""

import json
import os
import re
import shutil

import pytest
from conftest import golden, needs_tools, prometheus_families
from test_observability import check_exposition

import fakeroot

THP = "sys/kernel/mm/transparent_hugepage/"
MM = "sys/kernel/mm/mmtune/"
ETC = "etc/mmtune/profiles/"


def skip_lines(out):
    return [l for l in out.splitlines() if "not on this kernel line" in l]


def select(root, name):
    """Selected as well as applied: verify counts applied != selected as drift."""
    fakeroot.write(root, "etc/mmtune/profile", name + "\n")


def apply(root, run, name):
    """Select and apply profile name, which succeeds: the apply's stdout."""
    select(root, name)
    rc, out, err = run("apply", name)
    assert (rc, err) == (0, "")
    return out


def counters_612(root):
    """Some traffic through the per-size paths of a 6.12 kernel."""
    for rel, v in (("hugepages-64kB/stats/anon_fault_alloc", "1200"),
                   ("hugepages-64kB/stats/swpout", "7"),
                   ("hugepages-64kB/stats/zswpout", "42"),
                   ("hugepages-64kB/stats/nr_anon", "300"),
                   ("hugepages-16kB/stats/anon_fault_fallback", "5"),
                   ("hugepages-2048kB/stats/zswpout", "3"),
                   ("hugepages-2048kB/stats/swpout_fallback", "1"),
                   ("hugepages-8kB/stats/zswpout", "9")):
        fakeroot.write(root, THP + rel, v)
    fakeroot.write(root, MM + "zswap_large/thp_stored", "54")


@pytest.mark.parametrize("line", ["6.12"])
def test_612_apply_sets_every_size_golden(root, run, line):
    out = apply(root, run, "container-host")
    golden("apply-612-container-host.txt", out)
    for size in (16, 32, 64):
        assert fakeroot.read(root, THP + "hugepages-%dkB/enabled" % size) == \
            "[always] inherit madvise never"
    assert fakeroot.read(root, THP + "hugepages-128kB/enabled") == "always inherit madvise [never]"
    assert fakeroot.read(root, MM + "thp_swap/policy_16kB") == "inherit [whole] split adaptive"
    assert fakeroot.read(root, MM + "thp_swap/policy_64kB") == "[inherit] whole split adaptive"
    assert run("verify")[0] == 0
    # The knobs of 6.1 (swap_slots, split_zero, pcp_high) are the one skip line.
    assert skip_lines(out) == [
        "skipped: 5 knob(s) not on this kernel line (6.12), only on 6.1: "
        "mmtune.swap_slots.cache_size, mmtune.swap_slots.enabled, mmtune.split_zero.mode, "
        "mmtune.split_zero.enabled, mmtune.pcp_high.enabled"]


def test_61_same_profile_applies_with_one_skip_line(root, run):
    """6.1 has none of the per-size files: one line, exit 0, no drift (the
    cgroup sections apply: 6.1's one size)."""
    fakeroot.add_all_features(root)
    fakeroot.cgroup_policy(root, line="6.1")
    before = fakeroot.snapshot(root)
    out = apply(root, run, "container-host")
    assert skip_lines(out) == [
        "skipped: 5 knob(s) not on this kernel line (6.1), only on 6.12: "
        "thp.hugepages-16kB.enabled, thp.hugepages-32kB.enabled, thp.hugepages-64kB.enabled, "
        "mmtune.thp_swap.policy_16kB, mmtune.thp_swap.policy_32kB"]
    assert not [l for l in out.splitlines() if l.startswith(("warning", "skip "))]
    assert not [f for f in fakeroot.snapshot(root) if "hugepages-" in f or "kB" in f]
    assert set(fakeroot.snapshot(root)) == set(before)
    rc, vout, verr = run("verify")
    assert (rc, verr) == (0, "")
    assert "0 differ, 5 skipped" in vout and "drift" not in vout
    doc = json.loads(run("status", "--json")[1])
    assert doc["kernel"] == {"release": "6.1.0-mmtune", "line": "6.1", "mmtune_line": True}
    assert doc["other_line_knobs"] == [
        "thp.hugepages-16kB.enabled", "thp.hugepages-32kB.enabled", "thp.hugepages-64kB.enabled",
        "mmtune.thp_swap.policy_16kB", "mmtune.thp_swap.policy_32kB"]
    assert doc["absent_features"] == {} and doc["size_counters"] == {}
    rows = dict((k["name"], k) for k in doc["knobs"])
    assert rows["thp.hugepages-64kB.enabled"]["state"] == "skipped"
    assert rows["thp.hugepages-64kB.enabled"]["kernel_lines"] == ["6.12"]
    metrics = run("status", "--prometheus")[1]
    assert 'mmtune_kernel_info{release="6.1.0-mmtune",line="6.1"} 1\n' in metrics
    assert "hugepages" not in re.sub(r'knob="[^"]*"', "", metrics)     # not an absent feature
    assert "{size=" not in metrics


@pytest.mark.parametrize("line", ["6.1", "6.12"])
@pytest.mark.parametrize("name", ["database", "container-host", "batch-throughput"])
def test_profiles_with_sizes_apply_on_both_lines(root, run, line, name):
    out = apply(root, run, name)
    assert len(skip_lines(out)) == 1
    assert run("verify")[0] == 0
    rc, out, err = run("rollback")
    assert rc == 0
    if line == "6.12":
        assert fakeroot.read(root, THP + "hugepages-64kB/enabled") == "always inherit madvise [never]"
        assert fakeroot.read(root, THP + "hugepages-2048kB/enabled") == "always [inherit] madvise never"


def test_required_per_size_knobs_of_another_line_are_skipped_too(root, run):
    """Not marked "?": still not an error on 6.1, where they cannot exist."""
    fakeroot.add_all_features(root)
    fakeroot.write(root, ETC + "p.conf", "[thp.hugepages-64kB]\nenabled = always\n"
                   "[thp.hugepages-8kB]\nshmem_enabled = advise\n"
                   "[mmtune.zswap_large]\nstore_64kB = 0\nenabled = 1\n"
                   "[zswap]\nshrinker_enabled = 1\n")
    out = apply(root, run, "p")
    assert skip_lines(out) == [
        "skipped: 4 knob(s) not on this kernel line (6.1), only on 6.12: "
        "thp.hugepages-8kB.shmem_enabled, thp.hugepages-64kB.enabled, zswap.shrinker_enabled, "
        "mmtune.zswap_large.store_64kB"]
    assert fakeroot.read(root, MM + "zswap_large/enabled") == "1"
    assert run("verify")[0] == 0


@pytest.mark.parametrize("line", ["6.12"])
def test_612_knob_of_61_is_skipped_and_zswap_params_of_612_set(root, run, line):
    fakeroot.write(root, ETC + "p.conf", "[zswap]\nsame_filled_pages_enabled = 0\n"
                   "shrinker_enabled = 1\n[mmtune.pcp_high]\nenabled = 1\n")
    out = apply(root, run, "p")
    assert skip_lines(out) == [
        "skipped: 2 knob(s) not on this kernel line (6.12), only on 6.1: "
        "zswap.same_filled_pages_enabled, mmtune.pcp_high.enabled"]
    assert fakeroot.read(root, "sys/module/zswap/parameters/shrinker_enabled") == "Y"
    assert run("verify")[0] == 0


@pytest.mark.parametrize("line", ["6.12"])
def test_612_status_shows_line_and_per_size_counters_golden(root, run, line):
    select(root, "container-host")
    assert run("apply", "container-host")[0] == 0
    counters_612(root)
    rc, out, err = run("status")
    assert (rc, err) == (0, "")
    golden("status-612.txt", out)
    assert "kernel: 6.12.117-mmtune, line 6.12\n" in out
    assert re.search(r"^  64kB +1200 +0 +7 +0 +42 +0 +300$", out, re.M), out
    assert re.search(r"^  8kB +- +- +0 +0 +9 +0 +-$", out, re.M), out
    doc = json.loads(run("status", "--json")[1])
    assert doc["kernel"] == {"release": "6.12.117-mmtune", "line": "6.12", "mmtune_line": True}
    assert sorted(doc["size_counters"], key=lambda s: int(s[:-2])) == [
        "8kB", "16kB", "32kB", "64kB", "128kB", "256kB", "512kB", "1024kB", "2048kB"]
    assert doc["size_counters"]["64kB"]["zswpout"] == 42
    assert doc["size_counters"]["2048kB"]["swpout_fallback"] == 1
    assert "anon_fault_alloc" not in doc["size_counters"]["8kB"]     # shmem only
    assert doc["counters"]["mmtune.zswap_large.thp_stored"] == 54


@pytest.mark.parametrize("line", ["6.12"])
def test_612_metrics_have_a_size_label(root, run, line):
    select(root, "container-host")
    assert run("apply", "container-host")[0] == 0
    counters_612(root)
    rc, out, err = run("status", "--prometheus")
    assert (rc, err) == (0, "")
    fams = check_exposition(out)
    zs = dict(fams["mmtune_thp_zswpout_total"][1])
    assert fams["mmtune_thp_zswpout_total"][0] == "counter"
    assert zs['{size="64kB"}'] == 42.0 and zs['{size="2048kB"}'] == 3.0 and zs['{size="8kB"}'] == 9.0
    assert len(zs) == 9
    assert dict(fams["mmtune_thp_swpout_total"][1])['{size="64kB"}'] == 7.0
    assert dict(fams["mmtune_thp_anon_fault_alloc_total"][1])['{size="64kB"}'] == 1200.0
    assert '{size="8kB"}' not in dict(fams["mmtune_thp_anon_fault_alloc_total"][1])
    # Folios now, not events: a gauge.
    assert fams["mmtune_thp_nr_anon"][0] == "gauge"
    assert dict(fams["mmtune_thp_nr_anon"][1])['{size="64kB"}'] == 300.0
    # One family per stat, never one per size.
    assert not [f for f in fams if re.search(r"[0-9]+kB", f)]
    assert fams["mmtune_kernel_info"][1] == [('{release="6.12.117-mmtune",line="6.12"}', 1.0)]
    assert fams["mmtune_zswap_large_thp_stored_total"] == ("counter", [("", 54.0)])
    # The 6.1 groups are not features this kernel lacks: another line's.
    present = dict(fams["mmtune_kernel_feature_present"][1])
    assert not [f for f in present if "swap_slots" in f or "pcp_high" in f]
    assert present['{feature="thp.hugepages-64kB"}'] == 1.0


@pytest.mark.parametrize("line", ["6.12"])
def test_612_verify_reports_per_size_drift(root, run, line):
    select(root, "container-host")
    assert run("apply", "container-host")[0] == 0
    fakeroot.write(root, THP + "hugepages-64kB/enabled", "always inherit madvise [never]")
    fakeroot.write(root, MM + "thp_swap/policy_16kB", "inherit whole [split] adaptive")
    rc, out, err = run("verify")
    assert rc == 1
    assert ("drift: thp.hugepages-64kB.enabled: wanted always, live never "
            "(/usr/lib/mmtune/profiles/container-host.conf:") in out
    assert "drift: mmtune.thp_swap.policy_16kB: wanted whole, live split" in out
    assert "2 differ, 5 skipped" in out
    rc, out, err = run("apply", "--auto")
    assert rc == 0 and run("verify")[0] == 0


@pytest.mark.parametrize("line", ["6.12"])
def test_612_stock_kernel_without_hooks(root, run, line):
    """Debian's own 6.12: mTHP sizes are set, mmtune's knobs of 6.12 are
    an absent feature (exit 5), those of 6.1 the one skip line."""
    shutil.rmtree(os.path.join(root, MM))
    fakeroot.write(root, "proc/kallsyms", "0000000000000000 T _stext\n")
    out = apply(root, run, "database")
    assert skip_lines(out)[0].startswith("skipped: 6 knob(s) not on this kernel line (6.12), "
                                         "only on 6.1: mmtune.swap_slots.cache_size, ")
    warn = [l for l in out.splitlines() if l.startswith("warning: kernel feature mmtune")]
    assert len(warn) == 1 and "mmtune.thp_swap.policy_2048kB" in warn[0]
    assert "swap_slots" not in warn[0]
    assert fakeroot.read(root, THP + "hugepages-2048kB/enabled") == "always inherit [madvise] never"
    rc, out, err = run("verify")
    assert rc == 5
    assert "5 mmtune knob(s) of the profile cannot be set" in out


def test_a_kernel_of_no_mmtune_line_keeps_the_feature_rule(root, run):
    """6.6: no mmtune series; an mTHP size absent is an absent feature
    (one warning per feature), as before kernel lines."""
    fakeroot.write(root, "proc/sys/kernel/osrelease", "6.6.0-generic")
    fakeroot.write(root, ETC + "p.conf", "[?thp.hugepages-64kB]\nenabled = always\n")
    out = apply(root, run, "p")
    assert skip_lines(out) == []
    assert ("warning: kernel feature thp.hugepages-64kB is absent (no "
            "/sys/kernel/mm/transparent_hugepage/hugepages-64kB; needs mTHP size 64 kB") in out
    rc, out, err = run("status")
    assert "kernel: 6.6.0-generic, not a kernel line of mmtune (6.1, 6.12)\n" in out


BAD = [
    ("[thp.hugepages-4096kB]\nenabled = always\n",
     "p.conf:2: unknown section [thp.hugepages-4096kB]: no size 4096kB: thp.hugepages-<size>kB "
     "exists for 8kB, 16kB, 32kB, 64kB, 128kB, 256kB, 512kB, 1024kB, 2048kB"),
    ("[thp.hugepages-2M]\nenabled = always\n",
     "p.conf:2: unknown section [thp.hugepages-2M]: sizes are written in kB, as the kernel "
     "names them (did you mean 'thp.hugepages-2048kB'?)"),
    ("[thp.hugepages-64KB]\nenabled = always\n",
     "p.conf:2: unknown section [thp.hugepages-64KB]: sizes are written in kB, as the kernel "
     "names them (did you mean 'thp.hugepages-64kB'?)"),
    ("[thp.hugepages-8kB]\nenabled = always\n",
     "p.conf:2: unknown key 'enabled' in [thp.hugepages-8kB]: size 8kB has only shmem_enabled; "
     "enabled exists for 16kB, 32kB, 64kB, 128kB, 256kB, 512kB, 1024kB, 2048kB"),
    ("[thp.hugepages-64kB]\nenabled = within_size\n",
     "p.conf:2: thp.hugepages-64kB.enabled: 'within_size' is not one of "
     "always|inherit|madvise|never"),
    ("[thp.hugepages-64kB]\nshmem_enabled = madvise\n",
     "p.conf:2: thp.hugepages-64kB.shmem_enabled: 'madvise' is not one of "
     "always|inherit|within_size|advise|never"),
    ("[mmtune.thp_swap]\npolicy_8kB = whole\n",
     "p.conf:2: unknown key 'policy_8kB' in [mmtune.thp_swap]: no size 8kB: policy_<size>kB "
     "exists for 16kB, 32kB, 64kB, 128kB, 256kB, 512kB, 1024kB, 2048kB"),
    ("[mmtune.thp_swap]\npolicy_64k = whole\n",
     "p.conf:2: unknown key 'policy_64k' in [mmtune.thp_swap]: sizes are written in kB, as the "
     "kernel names them (did you mean 'policy_64kB'?)"),
    ("[mmtune.thp_swap]\npolicy_64kB = never\n",
     "p.conf:2: mmtune.thp_swap.policy_64kB: 'never' is not one of inherit|whole|split|adaptive"),
    ("[mmtune.zswap_large]\nstore_4096kB = 1\n",
     "p.conf:2: unknown key 'store_4096kB' in [mmtune.zswap_large]: no size 4096kB: "
     "store_<size>kB exists for 8kB, 16kB, 32kB, 64kB, 128kB, 256kB, 512kB, 1024kB, 2048kB"),
    ("[mmtune.zswap_large]\nstore_64kB = maybe\n",
     "p.conf:2: mmtune.zswap_large.store_64kB: 'maybe' is not a boolean (0 or 1)"),
    ("[thp.hugepages-64kB]\nenabled = always\nenabled = never\n",
     "p.conf:3: duplicate key enabled in [thp.hugepages-64kB], first set on line 2"),
]


@pytest.mark.parametrize("line", ["6.1", "6.12"])
@pytest.mark.parametrize("text,error", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_per_size_input_names_file_and_line_and_changes_nothing(root, run, line, text,
                                                                    error):
    """On both lines: bad input is an error even where the knob would be
    skipped, and nothing of the profile is applied."""
    fakeroot.write(root, ETC + "p.conf", text + "[sysctl]\nvm.swappiness = 1\n")
    before = fakeroot.snapshot(root)
    rc, out, err = run("apply", "p")
    assert rc == 2
    assert err == "error: /etc/mmtune/profiles/%s\nerror: nothing applied\n" % error
    assert fakeroot.snapshot(root) == before
    assert not os.path.exists(os.path.join(root, "run/mmtune/state.json"))
    rc, out, err = run("check", os.path.join(root, ETC + "p.conf"))
    assert rc == 2 and error.split(": ", 1)[1] in err


def test_bad_per_size_errors_golden(root, run):
    fakeroot.write(root, ETC + "bad.conf", "".join(t for t, _ in BAD[:4] + BAD[6:8] + BAD[9:10]))
    rc, out, err = run("show", "bad")
    assert rc == 2
    golden("errors-bad-sizes.txt", err)


@needs_tools
@pytest.mark.parametrize("line", ["6.12"])
def test_612_prometheus_client_parses_the_size_labels(root, run, line):
    counters_612(root)
    fams = prometheus_families(run("status", "--prometheus")[1])
    assert fams["mmtune_thp_zswpout"][0] == "counter"          # the parser drops _total
    assert ["mmtune_thp_zswpout_total", {"size": "64kB"}, 42.0] in fams["mmtune_thp_zswpout"][1]
    assert fams["mmtune_thp_nr_anon"][0] == "gauge"
