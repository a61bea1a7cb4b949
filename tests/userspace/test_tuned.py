"""tuned coexistence with tuned's own semantics (issue 16, point 5):
${f:virt_check:...} includes, [variables], inline comments, and an include
that cannot be resolved leaves every knob to tuned, saying so."""

import os
import re
import shutil

import pytest
from conftest import golden

import fakeroot

SWAPPINESS = "proc/sys/vm/swappiness"


def tuned(root, active, openshift_include="${f:virt_check:virtual-guest:throughput-performance}"):
    """tuned's own chain (tuned 2.x): openshift -> virtual-guest or
    throughput-performance, with inline comments as tuned allows."""
    fakeroot.enable_tuned(root, active)
    fakeroot.write(root, "usr/lib/tuned/throughput-performance/tuned.conf",
                   "[main]\nsummary=Broadly applicable tuning\n[cpu]\ngovernor=performance\n"
                   "[vm]\ntransparent_hugepages=always   # THP for throughput\n"
                   "[sysctl]\nvm.dirty_ratio = 40 # inline\nvm.dirty_background_ratio = 10\n"
                   "vm.swappiness=10\n")
    fakeroot.write(root, "usr/lib/tuned/virtual-guest/tuned.conf",
                   "[main]\ninclude=throughput-performance\n[sysctl]\nvm.dirty_ratio = 30\n"
                   "vm.swappiness = 30\n")
    fakeroot.write(root, "usr/lib/tuned/openshift/tuned.conf",
                   "[main]\nsummary=Optimize systems running OpenShift (parent profile)\n"
                   "include=%s\n[sysctl]\nnet.ipv4.ip_forward=1\nvm.max_map_count=262144\n"
                   % openshift_include)
    fakeroot.write(root, "usr/lib/tuned/openshift-node/tuned.conf",
                   "[main]\ninclude=openshift\n[sysctl]\nnet.ipv4.tcp_fastopen=3\n")


OWNED = ["sysctl.vm.swappiness", "sysctl.vm.dirty_ratio", "sysctl.vm.dirty_background_ratio",
         "thp.enabled"]


@pytest.mark.parametrize("virt", ["kvm", "none", None])
def test_virt_check_include_is_followed(root, run, virt):
    tuned(root, "openshift-node")
    before = dict((k, fakeroot.read(root, k)) for k in (
        SWAPPINESS, "proc/sys/vm/dirty_ratio", "sys/kernel/mm/transparent_hugepage/enabled"))
    rc, out, err = run("apply", "database", virt=virt)
    assert rc == 0, err
    skipped = sorted(l.split()[1][:-1] for l in out.splitlines() if "owned by tuned" in l)
    assert skipped == sorted(OWNED)
    who = {"kvm": "virtual-guest", "none": "throughput-performance"}.get(virt)
    line = [l for l in out.splitlines() if l.startswith("skip sysctl.vm.swappiness:")][0]
    # Unknown virtualisation: tuned could pick either; both are tuned's.
    assert line == "skip sysctl.vm.swappiness: owned by tuned profile openshift-node " \
        "(/usr/lib/tuned/%s/tuned.conf)" % (who or "virtual-guest")
    for k, v in before.items():
        assert fakeroot.read(root, k) == v, k
    assert fakeroot.read(root, "sys/kernel/mm/transparent_hugepage/defrag") == \
        "always defer defer+madvise madvise [never]"      # not tuned's: applied


def test_variables_in_include(root, run):
    tuned(root, "openshift", "${parent}")
    with open(root + "/usr/lib/tuned/openshift/tuned.conf", "a") as f:
        f.write("[variables]\nparent = throughput-performance\n")
    rc, out, err = run("apply", "database")
    assert sorted(l.split()[1][:-1] for l in out.splitlines() if "owned by tuned" in l) == sorted(OWNED)


def test_unresolvable_include_leaves_everything_to_tuned(root, run):
    tuned(root, "openshift", "${f:exec:/usr/bin/pick-profile}")
    fakeroot.write(root, "etc/mmtune/profile", "database\n")      # selected, so verify can pass
    before = fakeroot.snapshot(root)
    rc, out, err = run("apply", "database")
    assert rc == 0, err
    assert ("skip sysctl.vm.swappiness: owned by tuned profile openshift: cannot resolve "
            "/usr/lib/tuned/openshift/tuned.conf: include=${f:exec:/usr/bin/pick-profile} "
            "(${f:exec:/usr/bin/pick-profile}), so every knob tuned could set is left to it\n") in out
    assert not [l for l in out.splitlines() if l.startswith("set ")]
    assert fakeroot.snapshot(root) == before
    rc, out, err = run("verify")
    assert rc == 0 and out.endswith("0 differ, 0 skipped, 23 owned by tuned\n")


DEFRAG = "sys/kernel/mm/transparent_hugepage/defrag"


def site_db(root, main):
    """An admin's /etc/tuned/site-db on top of tuned's own profiles."""
    tuned(root, "site-db")
    fakeroot.write(root, "etc/tuned/site-db/tuned.conf",
                   "[main]\nsummary=Site database   # DBA team\n%s\n"
                   "[sysctl]\nvm.max_map_count=262144\t# search engine\n" % main)


def test_inline_comment_on_the_include_line(root, run):
    """include=NAME  # comment includes NAME (tuned's configparser drops the
    comment): what NAME sets is tuned's, the rest (thp.defrag) is applied.
    Read with the comment, the include would name no profile and every knob
    would be left to tuned."""
    site_db(root, "include=throughput-performance  # base")
    rc, out, err = run("apply", "database")
    assert rc == 0, err
    assert "cannot resolve" not in out
    assert sorted(l.split()[1][:-1] for l in out.splitlines() if "owned by tuned" in l) == \
        sorted(OWNED)
    assert ("skip sysctl.vm.swappiness: owned by tuned profile site-db "
            "(/usr/lib/tuned/throughput-performance/tuned.conf)\n") in out
    assert fakeroot.read(root, SWAPPINESS) == "60"
    assert fakeroot.read(root, DEFRAG) == "always defer defer+madvise madvise [never]"


@pytest.mark.parametrize("include, missing", [
    # "#" inside a word is no comment for tuned: a profile name with a "#".
    ("include=throughput-performance#base", "throughput-performance#base"),
    # tuned splits at "," and ";"; a profile found nowhere we look.
    ("include=throughput-performance ; site-extras", "site-extras"),
])
def test_an_include_naming_no_profile_leaves_everything_to_tuned(root, run, include, missing):
    site_db(root, include)
    before = fakeroot.snapshot(root)
    rc, out, err = run("apply", "database")
    assert rc == 0, err
    assert ("skip sysctl.vm.swappiness: owned by tuned profile site-db: cannot resolve "
            "/etc/tuned/site-db/tuned.conf: %s (no tuned profile %r in /etc/tuned/profiles, "
            "/etc/tuned, /usr/lib/tuned/profiles, /usr/lib/tuned), so every knob tuned "
            "could set is left to it\n" % (include, missing)) in out
    assert not [l for l in out.splitlines() if l.startswith("set ")]
    assert fakeroot.snapshot(root) == before


# --- tuned 2.20's own profiles (issue 28, point 3) --------------------------
TUNED = os.environ.get("MMTUNE_TUNED", "")
needs_tuned = pytest.mark.skipif(not TUNED, reason="MMTUNE_TUNED not set (tests/userspace/run.sh "
                                 "unpacks Debian 12's tuned 2.20 and sets it)")
X86_CPU = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R)\n"
THUNDERX_CPU = "processor\t: 0\nCPU implementer\t: 0x43\nCPU part\t: 0x0af\n"


def shipped(root, active, arch="x86_64", cpuinfo=X86_CPU):
    """tuned 2.20's /usr/lib/tuned and tuned-main.conf, on a host of arch."""
    os.symlink(os.path.join(TUNED, "usr/lib/tuned"), os.path.join(root, "usr/lib/tuned"))
    with open(os.path.join(TUNED, "etc/tuned/tuned-main.conf")) as f:
        fakeroot.write(root, "etc/tuned/tuned-main.conf", f.read())
    fakeroot.enable_tuned(root, active)
    fakeroot.write(root, "proc/sys/kernel/arch", arch)
    fakeroot.write(root, "proc/cpuinfo", cpuinfo)


def owned_lines(out):
    return "".join(l + "\n" for l in out.splitlines()
                   if l.startswith("skip ") or l.startswith("set thp."))


@needs_tuned
def test_golden_with_tuned_220_profiles(root, run):
    """apply database beside each of tuned's common server profiles on x86:
    [vm.thunderx] (uname_regex=aarch64) sets nothing here, so thp.enabled
    is mmtune's; on a ThunderX it is tuned's."""
    text = ""
    shipped(root, "throughput-performance")
    for active in ("throughput-performance", "aws", "virtual-guest", "latency-performance",
                   "postgresql", "balanced", "thunderx"):
        if active == "thunderx":
            fakeroot.write(root, "proc/sys/kernel/arch", "aarch64")
            fakeroot.write(root, "proc/cpuinfo", THUNDERX_CPU)
        fakeroot.write(root, "etc/tuned/active_profile", active.replace(
            "thunderx", "throughput-performance") + "\n")
        rc, out, err = run("apply", "database")
        assert (rc, err) == (0, "")
        text += "## tuned profile %s\n" % active.replace(
            "thunderx", "throughput-performance, aarch64 ThunderX") + owned_lines(out)
        if active in ("throughput-performance", "aws"):
            assert fakeroot.read(root, "sys/kernel/mm/transparent_hugepage/enabled") == \
                "always madvise [never]"
        assert run("rollback")[0] == 0
    assert "skip thp.enabled: owned by tuned profile throughput-performance " \
        "(/usr/lib/tuned/throughput-performance/tuned.conf)\n" in out
    golden("tuned-220.txt", text)


@needs_tuned
def test_installed_but_disabled_tuned_owns_nothing(root, run):
    shipped(root, "throughput-performance")
    os.unlink(os.path.join(root, "etc/systemd/system/multi-user.target.wants/tuned.service"))
    rc, out, err = run("apply", "database")
    assert (rc, err) == (0, "") and "owned by tuned" not in out
    assert fakeroot.read(root, SWAPPINESS) == "10"
    # Running now (started by hand) counts, enabled or not.
    fakeroot.write(root, "run/systemd/units/invocation:tuned.service", "")
    rc, out, err = run("verify")
    assert re.search(r", [1-9][0-9]* owned by tuned\n$", out), out


@needs_tuned
def test_tuned_reapplies_sysctl_d(root, run):
    """reapply_sysctl=1 (tuned-main.conf's default): tuned writes the
    sysctl.d values again after its own, so they are not mmtune's to set."""
    shipped(root, "throughput-performance")
    fakeroot.write(root, "etc/sysctl.d/90-local.conf", "vm.watermark_scale_factor = 50\n")
    rc, out, err = run("apply", "database")
    assert ("skip sysctl.vm.watermark_scale_factor: owned by /etc/sysctl.d/90-local.conf:1 "
            "(tuned profile throughput-performance re-applies it after its own sysctls: "
            "reapply_sysctl in /etc/tuned/tuned-main.conf)\n") in out
    assert fakeroot.read(root, "proc/sys/vm/watermark_scale_factor") == "10"


# --- decisions compared with tuned 2.20's own loader and merger -------------
# Profiles on the edges of tuned's merge (tuned/profiles/merger.py, unit.py,
# loader.py, locator.py): a child's section takes type and enabled (default
# true) from the child, replace= is only True/true/1, drop= removes options,
# every file is loaded once, /etc/tuned/NAME may include the NAME below it,
# "-NAME" includes a profile only when it exists.
EDGE = {
    "usr/lib/tuned/base": "[sysctl]\nvm.swappiness=10\nvm.dirty_ratio=40\n"
                          "[vm]\ntransparent_hugepages=always\n"
                          "[mysysfs]\ntype=sysfs\nenabled=false\n"
                          "/sys/kernel/mm/transparent_hugepage/defrag=never\n"
                          "[off]\ntype=sysctl\nenabled=false\nvm.page-cluster=0\n",
    "usr/lib/tuned/reenable": "[main]\ninclude=base\n[mysysfs]\n"
                              "/sys/kernel/mm/transparent_hugepage/khugepaged/defrag=0\n",
    "usr/lib/tuned/enabled-yes": "[main]\ninclude=base\n[off]\ntype=sysctl\nenabled=yes\n",
    "usr/lib/tuned/untyped": "[main]\ninclude=base\n[off]\nenabled=true\n",
    "usr/lib/tuned/replace-yes": "[main]\ninclude=base\n[sysctl]\nreplace=yes\n"
                                 "vm.vfs_cache_pressure=50\n",
    "usr/lib/tuned/replace-true": "[main]\ninclude=base\n[sysctl]\nreplace=true\n"
                                  "vm.vfs_cache_pressure=50\n",
    "usr/lib/tuned/dropped": "[main]\ninclude=base\n[sysctl]\ndrop=vm.swappiness\n",
    "usr/lib/tuned/diamond": "[main]\ninclude=reenable, replace-true\n",
    "usr/lib/tuned/maybe": "[main]\ninclude=-no-such-profile,replace-true\n",
    "etc/tuned/base": "[main]\ninclude=base\n[sysctl]\nvm.min_free_kbytes=65536\n",
}


def tuned_owns(root, active):
    """The knobs tuned 2.20's own code sets for profile active."""
    import sys
    sys.path.insert(0, os.path.join(TUNED, "usr/lib/python3/dist-packages"))
    try:
        import tuned.profiles as tp
        from tuned.profiles.variables import Variables
    finally:
        sys.path.pop(0)
    import fnmatch
    from mmtunectl import schema
    locator = tp.Locator([os.path.join(root, "usr/lib/tuned"), os.path.join(root, "etc/tuned")])
    prof = tp.Loader(locator, tp.Factory(), tp.Merger(), None, Variables()).load(active)
    owns = set()
    for unit in prof.units.values():
        if not unit.enabled:
            continue
        for key in unit.options:
            if unit.type == "sysctl" and "sysctl." + key in schema.BY_NAME:
                owns.add("sysctl." + key)
            elif unit.type == "vm" and key == "transparent_hugepages":
                owns.add("thp.enabled")
            elif unit.type == "sysfs":
                owns |= set(k.name for k in schema.KNOBS if fnmatch.fnmatch("/" + k.path, key))
    for a, b in schema.PAIRS:
        if a in owns or b in owns:
            owns |= {a, b}
    return owns


@needs_tuned
@pytest.mark.filterwarnings("ignore::DeprecationWarning")      # tuned's own regex strings
@pytest.mark.parametrize("active", ["base", "reenable", "enabled-yes", "untyped", "replace-yes",
                                    "replace-true", "dropped", "diamond", "maybe"])
def test_decisions_match_tuneds_loader(root, active):
    from mmtunectl import tuned as mtuned
    from mmtunectl.context import Context
    for d, text in EDGE.items():
        fakeroot.write(root, d + "/tuned.conf", text)
    fakeroot.enable_tuned(root, active)
    fakeroot.write(root, "etc/tuned/tuned-main.conf", "reapply_sysctl = 0\n")
    mine = set(mtuned.owned(Context(root=root), facts={"virt": "none"}))
    want = tuned_owns(root, active)
    assert mine == want
    assert want, "every edge profile owns something"
