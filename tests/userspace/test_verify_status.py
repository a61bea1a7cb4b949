"""verify exit codes and drift listing; status text and the --json schema."""

import json
import os

from conftest import golden, refused

import fakeroot

SWAPPINESS = "proc/sys/vm/swappiness"


def test_verify_codes(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "database\n")      # selected, so verify can pass
    assert run("apply", "database")[0] == 0
    rc, out, err = run("verify")
    assert (rc, err) == (0, "")
    assert out == "verify: profile database: 13 match, 0 differ, 10 skipped, 0 owned by tuned\n"
    fakeroot.write(root, SWAPPINESS, "61")
    fakeroot.write(root, "sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never")
    fakeroot.write(root, "proc/sys/vm/min_free_kbytes", "1000")       # below the bound
    rc, out, err = run("verify")
    assert rc == 1
    golden("verify-drift.txt", out)
    # A file of the kernel's own that this kernel lacks is skipped; one of
    # a loaded mmtune.ko's is missing.
    os.unlink(os.path.join(root, "sys/module/zswap/parameters/zpool"))
    os.unlink(os.path.join(root, "sys/kernel/mm/mmtune/zswap_large/backoff_ms"))
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-z.conf",
                   "[mmtune.zswap_large]\nbackoff_ms = 1000\n")
    rc, out, err = run("verify")
    assert rc == 1 and "zswap.zpool" not in out
    assert ("missing: mmtune.zswap_large.backoff_ms: wanted 1000, live (no such file) "
            "(/etc/mmtune/profiles/database.conf.d/50-z.conf:2)\n") in out
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/99-typo.conf", "[sysctl]\nvm.swapiness=1\n")
    assert refused(root, run, "verify") == (
        "error: /etc/mmtune/profiles/database.conf.d/99-typo.conf:2: unknown key "
        "'vm.swapiness' in [sysctl] (did you mean 'vm.swappiness'?)\n")


def test_verify_without_apply_checks_the_recommended_profile(root, run):
    rc, out, err = run("verify")
    assert rc == 1
    assert out.splitlines()[-1].startswith("verify: profile balanced (not applied): ")


def test_verify_unreadable_state_is_an_error(root, run):
    fakeroot.write(root, "run/mmtune/state.json", "{not json")
    rc, out, err = run("verify")
    assert rc == 2
    assert err.startswith("error: /run/mmtune/state.json: unreadable state")


def test_status_text(root, run):
    assert run("apply", "container-host")[0] == 0
    fakeroot.write(root, SWAPPINESS, "33")
    rc, out, err = run("status")
    assert rc == 1                  # drift (and applied != selected): as verify
    golden("status.txt", out)


def test_status_json_golden(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "web-latency\n")
    assert run("apply", "--auto")[0] == 0
    fakeroot.write(root, SWAPPINESS, "33")
    rc, out, err = run("status", "--json")
    assert rc == 1
    golden("status.json", out)


def test_status_json_schema_is_stable(root, run):
    """The documented keys and types (golden/status.json), independent of values."""
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    assert sorted(doc) == sorted(
        ["absent_features", "applied", "applied_profile", "cgroup_stats", "cgroups", "counters", "errors", "exit_status",
         "health", "hook_kernels", "kernel", "kernel_hooks", "knobs", "last_apply", "module", "module_expected",
         "ok", "other_line_knobs", "problems", "profile", "recommended_profile",
         "recorded_profile", "schema_version", "selected_profile", "size_counters",
         "sysctl_d_overridden", "tuned"])
    assert sorted(doc["kernel"]) == ["line", "mmtune_line", "release"]
    assert isinstance(doc["kernel"]["mmtune_line"], bool)
    assert isinstance(doc["other_line_knobs"], list)
    assert all(isinstance(v, int) for st in doc["size_counters"].values() for v in st.values())
    assert isinstance(doc["ok"], bool) and isinstance(doc["module_expected"], bool)
    assert doc["health"] in ("ok", "drift", "error", "module-not-loaded", "kernel-without-hooks")
    assert doc["kernel_hooks"] in ("yes", "no", "unknown")
    assert doc["schema_version"] == 1 and doc["applied"] is None
    assert sorted(doc["profile"]) == ["name", "reason", "source", "summary"]
    assert doc["profile"]["source"] in ("explicit", "cmdline", "runtime-override",
                                        "admin-override", "recorded", "recommend", "default")
    assert sorted(doc["module"]) == ["abi_version", "features", "loaded", "version"]
    for k in doc["knobs"]:
        assert set(k) - {"owner", "absent_feature", "in_use", "kernel_lines"} == {"name", "path", "wanted", "live", "state", "optional", "origin"}
        assert k["state"] in ("match", "drift", "missing", "skipped", "tuned", "unmanaged")
    assert all(isinstance(v, int) for v in doc["counters"].values())


def test_status_reports_broken_profile_and_exits_2(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "nosuch\n")
    rc, out, err = run("status", "--json")
    assert rc == 2
    doc = json.loads(out)
    assert doc["errors"][0].startswith("no profile 'nosuch'")
    assert doc["profile"]["name"] == "nosuch" and len(doc["knobs"]) > 0


def test_status_without_module(root, run):
    import shutil
    shutil.rmtree(os.path.join(root, "sys/kernel/mm/mmtune"))
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    assert doc["module"] == {"loaded": False, "version": None, "abi_version": None, "features": {}}
    assert doc["counters"] == {}


def test_verify_reports_a_changed_selection(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    assert run("apply", "--auto")[0] == 0
    assert run("verify")[0] == 0
    fakeroot.write(root, "etc/mmtune/profile", "web-latency\n")     # config management moved on
    rc, out, err = run("verify")
    assert rc == 1
    assert ("drift: profile: applied database, now selected web-latency (override in "
            "/etc/mmtune/profile); run mmtunectl apply --auto\n") in out
    assert run("apply", "--auto")[0] == 0
    assert run("verify")[0] == 0
    # By hand: the next boot applies web-latency, so this is drift too
    # (issue 28, point 7).
    assert run("apply", "balanced")[0] == 0
    rc, out, err = run("verify")
    assert rc == 1 and ("drift: profile: applied balanced, now selected web-latency (override "
                        "in /etc/mmtune/profile); run mmtunectl apply --auto\n") in out
    rc, out, err = run("status", "--prometheus")
    assert "mmtune_ok 0\n" in out and "mmtune_health_status 1\n" in out
