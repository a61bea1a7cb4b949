"""A profile applies on every kernel mmtune meets (issue 28, point 2): the
knobs of a kernel feature this kernel lacks (zswap, mmtune.ko, an mTHP
size) are skipped with one warning line naming the feature, and status,
JSON and metrics say so. A knob is required only where its feature exists."""

import json
import os
import re
import shutil

import pytest

import fakeroot

THP = "sys/kernel/mm/transparent_hugepage/"


def lines(out, prefix):
    return [l for l in out.splitlines() if l.startswith(prefix)]


def test_debian_cloud_kernel_without_zswap(root, run):
    """linux-image-cloud-amd64 (bookworm): # CONFIG_ZSWAP is not set."""
    shutil.rmtree(os.path.join(root, "sys/module/zswap"))
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    rc, out, err = run("apply", "--auto")
    assert (rc, err) == (0, "")
    warn = lines(out, "warning: kernel feature zswap")
    assert warn == ["warning: kernel feature zswap is absent (no /sys/module/zswap; needs "
                    "CONFIG_ZSWAP): skipped zswap.compressor, zswap.zpool, "
                    "zswap.max_pool_percent, zswap.enabled"]
    assert fakeroot.read(root, "proc/sys/vm/swappiness") == "10"
    assert fakeroot.read(root, THP + "enabled") == "always madvise [never]"
    rc, out, err = run("verify")
    assert rc == 0, out
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    assert doc["absent_features"]["zswap"]["knobs"] == [
        "zswap.compressor", "zswap.zpool", "zswap.max_pool_percent", "zswap.enabled"]
    assert [k["state"] for k in doc["knobs"] if k["name"] == "zswap.enabled"] == ["skipped"]
    rc, out, err = run("status")
    assert ("kernel: no zswap (/sys/module/zswap absent; needs CONFIG_ZSWAP): 4 knob(s) "
            "of the profile skipped\n") in out
    rc, out, err = run("status", "--prometheus")
    assert 'mmtune_kernel_feature_present{feature="zswap"} 0\n' in out
    assert 'mmtune_kernel_feature_present{feature="thp"} 1\n' in out


def test_debian_generic_kernel_zswap_zbud_no_hooks(root, run):
    """linux-image-amd64: zswap with zbud, no mmtune hooks (a fallback kernel)."""
    shutil.rmtree(os.path.join(root, "sys/kernel/mm/mmtune"))
    fakeroot.write(root, "proc/kallsyms", "0000000000000000 T _stext\n")
    rc, out, err = run("apply", "balanced")
    assert (rc, err) == (0, "")
    assert len(lines(out, "warning: kernel feature mmtune is absent")) == 1
    assert not lines(out, "warning: kernel feature mmtune.")      # one line, not one per group
    assert fakeroot.read(root, "sys/module/zswap/parameters/zpool") == "zsmalloc"
    assert fakeroot.read(root, "sys/module/zswap/parameters/enabled") == "Y"
    assert run("verify")[0] == 5


def test_kernel_with_hooks_but_no_module(root, run):
    shutil.rmtree(os.path.join(root, "sys/kernel/mm/mmtune"))
    rc, out, err = run("apply", "web-latency")
    assert (rc, err) == (0, "")
    warn = lines(out, "warning: kernel feature mmtune")
    assert len(warn) == 1 and warn[0].startswith(
        "warning: kernel feature mmtune is absent (no /sys/kernel/mm/mmtune; needs mmtune.ko "
        "(loaded, built for this kernel's hook ABI)): skipped mmtune.")
    assert sorted(warn[0].split("skipped ")[1].split(", ")) == sorted(
        "mmtune." + k for k in (
            "zswap_large.backoff_ms", "zswap_large.enabled", "swap_slots.cache_size",
            "swap_slots.activate_factor", "swap_slots.deactivate_factor",
            "swap_slots.enabled", "thp_swap.sample_size", "thp_swap.threshold",
            "thp_swap.policy", "thp_swap.enabled", "split_zero.mode", "split_zero.enabled",
            "pcp_high.high_max_fraction", "pcp_high.decay_percent", "pcp_high.enabled"))
    assert fakeroot.read(root, "proc/sys/vm/swappiness") == "30"
    assert run("verify")[0] == 3


def test_required_knobs_of_an_absent_feature_are_skipped_too(root, run):
    """Required means required when the feature exists: an unmarked mmtune
    knob is skipped when there is no module, an error when the module is
    there but lacks the file."""
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-pcp.conf",
                   "[mmtune.pcp_high]\ndecay_percent = 20\n")
    rc, out, err = run("apply", "database")
    assert (rc, err) == (0, "") and "skipped mmtune.pcp_high.decay_percent" in out
    fakeroot.add_all_features(root)
    os.unlink(os.path.join(root, "sys/kernel/mm/mmtune/pcp_high/decay_percent"))
    before = fakeroot.snapshot(root)
    rc, out, err = run("apply", "database")
    assert rc == 2 and "/sys/kernel/mm/mmtune/pcp_high/decay_percent is missing" in err
    assert fakeroot.snapshot(root) == before


def test_an_mthp_size_the_kernel_lacks(root, run):
    """6.12 with mTHP: a size without its directory (another page size, an
    older kernel) is skipped with one line; the sizes present are set."""
    fakeroot.write(root, "proc/sys/kernel/osrelease", "6.12.117-mmtune")
    for size in (64, 2048):
        fakeroot.write(root, THP + "hugepages-%dkB/enabled" % size, "always inherit madvise [never]")
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/60-mthp.conf",
                   "[thp.hugepages-64kB]\nenabled = inherit\n"
                   "[thp.hugepages-16kB]\nenabled = always\n")
    fakeroot.write(root, "etc/mmtune/profile", "database\n")      # selected, so verify can pass
    rc, out, err = run("apply", "database")
    assert (rc, err) == (0, "")
    assert lines(out, "warning: kernel feature thp.") == [
        "warning: kernel feature thp.hugepages-16kB is absent (no "
        "/sys/kernel/mm/transparent_hugepage/hugepages-16kB; needs mTHP size 16 kB (kernel "
        "6.8+ with this size)): skipped thp.hugepages-16kB.enabled"]
    assert fakeroot.read(root, THP + "hugepages-64kB/enabled") == "always [inherit] madvise never"
    assert run("verify")[0] == 0


PROFILES = sorted(f[:-5] for f in os.listdir(os.path.join(fakeroot.SYSTEMD, "profiles")))


@pytest.mark.parametrize("model", sorted(fakeroot.KERNELS))
@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_applies_on_distribution_kernels(root, run, model, profile):
    """Debian 12's and 13's cloud kernels (no mmtune, no zswap) and a 6.18+
    kernel (no zswap zpool parameter): every shipped profile applies and
    verifies with no failure; what the kernel lacks is skipped with one
    warning line each, and verify says only that the kernel has no hooks."""
    shutil.rmtree(root)
    fakeroot.make_kernel(root, model)
    fakeroot.write(root, "etc/mmtune/profile", profile + "\n")
    rc, out, err = run("apply", "--auto")
    assert (rc, err) == (0, ""), out
    assert re.search(r"^applied profile %s: [0-9]+ written, [0-9]+ already set, 0 restored, "
                     r"[1-9][0-9]* skipped\n" % profile, out, re.M), out
    warned = lines(out, "warning: kernel ")
    assert len(warned) == len(set(warned))
    if model == "7.3":
        assert ("warning: kernel file of zswap.zpool is absent (no "
                "/sys/module/zswap/parameters/zpool; needs a kernel before 6.18 (later ones "
                "have no zpool parameter: zsmalloc only)): skipped zswap.zpool") in warned
        assert fakeroot.read(root, "sys/module/zswap/parameters/enabled") == "Y"
    else:
        assert [w for w in warned if " zswap " in w]
    rc, out, err = run("verify")
    assert err == ""
    assert not [l for l in out.splitlines() if l.startswith(("drift", "missing"))], out
    # 5: a kernel without the mmtune hooks while the profile sets mmtune
    # knobs (every shipped profile does); nothing else is wrong.
    assert rc == 5, out
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    assert doc["health"] == "kernel-without-hooks" and doc["kernel_hooks"] == "no"
    assert not [k for k in doc["knobs"] if k["state"] in ("drift", "missing")]
