"""verify and status exit statuses that a fleet check cannot miss (issue 16,
point 1): drift 1, mmtune expected but not loaded 3, kernel without hooks 5;
status --json's health fields; counters discovered from sysfs."""

import json
import os
import shutil

import fakeroot

MMTUNE = "sys/kernel/mm/mmtune"


def unload(root):
    shutil.rmtree(os.path.join(root, MMTUNE))


def no_hooks(root):
    fakeroot.write(root, "proc/kallsyms", "0000000000000000 T _stext\n")


def status(run):
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    assert doc["exit_status"] == rc
    return rc, doc


def test_module_expected_but_not_loaded_exits_3(root, run):
    assert run("apply", "--auto")[0] == 0
    unload(root)                                # failed DKMS build, fallback module dir
    rc, out, err = run("verify")
    assert rc == 3, out + err
    assert ("module: mmtune.ko is not loaded (no /sys/kernel/mm/mmtune) but the kernel has the "
            "mmtune hooks: 8 mmtune knob(s) of the profile are not set;") in out
    assert out.endswith("verify: profile balanced: 8 match, 0 differ, 8 skipped, 0 owned by tuned\n")
    rc, doc = status(run)
    assert rc == 3
    assert (doc["ok"], doc["health"], doc["module_expected"], doc["kernel_hooks"]) == (
        False, "module-not-loaded", True, "yes")
    assert run("status")[0] == 3


def test_kernel_without_hooks_exits_5(root, run):
    unload(root)
    no_hooks(root)
    assert run("apply", "--auto")[0] == 0
    rc, out, err = run("verify")
    assert rc == 5, out + err
    assert "kernel: this kernel has no mmtune hooks (CONFIG_MMTUNE_HOOKS); 8 mmtune knob(s)" in out
    rc, doc = status(run)
    assert (doc["health"], doc["module_expected"], doc["kernel_hooks"]) == (
        "kernel-without-hooks", False, "no")
    # Drift is more urgent than a kernel without hooks.
    fakeroot.write(root, "proc/sys/vm/swappiness", "1")
    assert run("verify")[0] == 1


def test_hooks_from_the_kernel_config_and_when_unknown(root, run):
    unload(root)
    os.unlink(os.path.join(root, "proc/kallsyms"))
    fakeroot.write(root, "boot/config-6.1.0-mmtune", "CONFIG_SWAP=y\n# CONFIG_MMTUNE_HOOKS is not set\n")
    assert run("apply", "--auto")[0] == 0
    assert run("verify")[0] == 5
    fakeroot.write(root, "boot/config-6.1.0-mmtune", "CONFIG_SWAP=y\nCONFIG_MMTUNE_HOOKS=y\n")
    assert run("verify")[0] == 3
    os.unlink(os.path.join(root, "boot/config-6.1.0-mmtune"))
    rc, out, err = run("verify")                # cannot tell: loud, not a pass
    assert rc == 3 and "but the kernel may have the mmtune hooks" in out
    assert status(run)[1]["kernel_hooks"] == "unknown"


def test_stock_kernel_booted_names_the_installed_hook_kernels(root, run):
    """Debian 13: a security update's 6.12.<n+1>+deb13 sorts above our
    6.12.<n>-mmtune and becomes GRUB's default; status names our kernels."""
    unload(root)
    fakeroot.write(root, "proc/sys/kernel/osrelease", "6.12.118+deb13-cloud-amd64\n")
    fakeroot.write(root, "boot/config-6.12.118+deb13-cloud-amd64", "CONFIG_SWAP=y\n")
    fakeroot.write(root, "boot/config-6.12.117-mmtune-cloud-amd64", "CONFIG_MMTUNE_HOOKS=y\n")
    fakeroot.write(root, "boot/config-6.1.192-mmtune-cloud-amd64", "CONFIG_MMTUNE_HOOKS=y\n")
    fakeroot.write(root, "boot/config-6.12.9-mmtune-cloud-amd64", "CONFIG_MMTUNE_HOOKS=y\n")
    fakeroot.write(root, "boot/config-6.1.0-28-cloud-amd64", "# CONFIG_MMTUNE_HOOKS is not set\n")
    assert run("apply", "--auto")[0] == 0
    rc, out, err = run("verify")
    assert rc == 5, out + err
    assert ("boot a kernel with the mmtune patches (installed: 6.12.117-mmtune-cloud-amd64, "
            "6.12.9-mmtune-cloud-amd64, 6.1.192-mmtune-cloud-amd64; a newer distribution "
            "kernel may have become the boot default)") in out
    rc, doc = status(run)
    assert (doc["kernel_hooks"], doc["hook_kernels"]) == ("no", [
        "6.12.117-mmtune-cloud-amd64", "6.12.9-mmtune-cloud-amd64", "6.1.192-mmtune-cloud-amd64"])
    rc, out, err = run("status")
    assert ("kernel: installed with the mmtune hooks, not running: 6.12.117-mmtune-cloud-amd64, "
            "6.12.9-mmtune-cloud-amd64, 6.1.192-mmtune-cloud-amd64\n") in out
    # None installed: the message as before, an empty list.
    for rel in ("6.12.117-mmtune-cloud-amd64", "6.1.192-mmtune-cloud-amd64", "6.12.9-mmtune-cloud-amd64"):
        os.unlink(os.path.join(root, "boot/config-" + rel))
    rc, out, err = run("verify")
    assert rc == 5 and "boot a kernel with the mmtune patches\n" in out, out
    assert status(run)[1]["hook_kernels"] == []


def test_not_loaded_beats_drift_and_a_profile_without_mmtune_needs_no_module(root, run):
    assert run("apply", "--auto")[0] == 0
    unload(root)
    fakeroot.write(root, "proc/sys/vm/swappiness", "1")
    assert run("verify")[0] == 3
    fakeroot.write(root, "etc/mmtune/profiles/plain.conf", "[sysctl]\nvm.swappiness = 1\n")
    fakeroot.write(root, "etc/mmtune/profile", "plain\n")
    assert run("apply", "plain")[0] == 0
    rc, doc = status(run)
    assert (rc, doc["ok"], doc["module_expected"]) == (0, True, False)


def test_status_json_says_applied_and_selected_profiles(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    assert run("apply", "--auto")[0] == 0
    rc, doc = status(run)
    assert (rc, doc["ok"], doc["health"]) == (0, True, "ok")
    assert (doc["applied_profile"], doc["selected_profile"]) == ("database", "database")
    assert doc["last_apply"] == {"time": 1767225600.0, "success": True, "profile": "database",
                                 "uid": 0, "error": None, "refused": []}
    fakeroot.write(root, "etc/mmtune/profile", "web-latency\n")
    rc, doc = status(run)
    assert (rc, doc["ok"], doc["health"]) == (1, False, "drift")
    assert (doc["applied_profile"], doc["selected_profile"]) == ("database", "web-latency")
    assert doc["problems"] == ["drift: profile: applied database, now selected web-latency "
                               "(override in /etc/mmtune/profile); run mmtunectl apply --auto"]


def test_counters_are_discovered_from_sysfs(root, run):
    fakeroot.add_all_features(root)
    # A counter of a newer module: read-only and one number.
    fakeroot.write(root, MMTUNE + "/pcp_high/new_counter", "7")
    os.chmod(os.path.join(root, MMTUNE, "pcp_high/new_counter"), 0o444)
    # A writable file is a knob, not a counter, known or not.
    fakeroot.write(root, MMTUNE + "/pcp_high/new_knob", "9")
    rc, doc = status(run)
    c = doc["counters"]
    assert c["mmtune.pcp_high.new_counter"] == 7
    assert "mmtune.pcp_high.new_knob" not in c and "mmtune.pcp_high.decay_percent" not in c
    assert "mmtune.pcp_high.zones" not in c and "mmtune.swap_slots.active" not in c
    assert c["mmtune.swap_slots.alloc_hit"] == 0 and c["mmtune.split_zero.bytes_not_written"] == 0
    assert len(c) == 1 + sum(1 for r in fakeroot.table() if r["type"] == "counter")
