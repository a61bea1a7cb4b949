"""apply and rollback: all or nothing, read back, restore, saved state."""

import errno
import json
import os

import pytest
from conftest import golden, refused

import fakeroot
from mmtunectl.context import Context

PROFILES = ["balanced", "database", "web-latency", "batch-throughput",
            "virtualization-host", "container-host"]
SWAPPINESS = "proc/sys/vm/swappiness"
ZSWAP = "sys/module/zswap/parameters"


def add_all_mmtune_knobs(root, line=fakeroot.LINE):
    """A module with every feature group of knobs.tsv, at its defaults."""
    fakeroot.add_all_features(root, line)


@pytest.mark.parametrize("name", PROFILES)
@pytest.mark.parametrize("line,module", [("6.1", "none"), ("6.1", "zswap-only"),
                                         ("6.1", "all-features"), ("6.12", "none"),
                                         ("6.12", "all-features")])
def test_apply_each_profile_reads_back(root, run, name, line, module):
    """On both kernel lines: the knobs of the other line are skipped (one
    line), never an error, and verify finds no drift."""
    fakeroot.write(root, "etc/mmtune/profile", name + "\n")  # selected: else verify says drift
    if module == "none":
        import shutil
        shutil.rmtree(os.path.join(root, "sys/kernel/mm/mmtune"))
    elif module == "all-features":
        add_all_mmtune_knobs(root, line)
    rc, out, err = run("apply", name)
    assert (rc, err) == (0, "")
    assert len([l for l in out.splitlines() if "not on this kernel line" in l]) <= 1
    rc, vout, verr = run("verify")
    # No module on a kernel with the hooks: loud (3), not a pass.
    assert rc == (3 if module == "none" else 0), vout + verr
    assert "0 differ" in vout
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    for k in doc["knobs"]:
        assert k["state"] in ("match", "skipped", "unmanaged"), k
        if k["state"] == "skipped" and not k.get("kernel_lines"):
            assert module != "all-features" and k["name"].startswith("mmtune."), k
        if k.get("kernel_lines"):
            assert line not in k["kernel_lines"] and k["name"] in doc["other_line_knobs"]


def test_apply_output_golden(run):
    rc, out, err = run("apply", "web-latency")
    assert rc == 0
    golden("apply-web-latency.txt", out)


def test_values_land_in_kernel_format(root, run):
    assert run("apply", "database")[0] == 0
    assert fakeroot.read(root, SWAPPINESS) == "10"
    assert fakeroot.read(root, ZSWAP + "/enabled") == "Y"
    assert fakeroot.read(root, "sys/kernel/mm/transparent_hugepage/enabled") == "always madvise [never]"
    assert fakeroot.read(root, "sys/kernel/mm/mmtune/zswap_large/enabled") == "1"


def test_bad_profile_changes_nothing(root, run):
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-local.conf",
                   "[sysctl]\nvm.swappiness = 5\n[zswap]\nmax_pool_percent = 101\n")
    assert refused(root, run, "apply", "database") == (
        "error: /etc/mmtune/profiles/database.conf.d/50-local.conf:4: "
        "zswap.max_pool_percent: 101 is out of range (1..100)\nerror: nothing applied\n")
    assert not os.path.exists(os.path.join(root, "run/mmtune/state.json"))


def test_missing_required_knob_changes_nothing(root, run):
    """A file a loaded mmtune.ko lacks (a module of another version) is an
    error unless optional; the kernel's own files come and go with kernel
    versions and are skipped (test_kernels.py)."""
    os.unlink(os.path.join(root, "sys/kernel/mm/mmtune/zswap_large/backoff_ms"))
    fakeroot.write(root, "etc/mmtune/profiles/balanced.conf.d/50-z.conf",
                   "[mmtune.zswap_large]\nbackoff_ms = 1000\n")
    err = refused(root, run, "apply", "balanced")
    assert ("error: /etc/mmtune/profiles/balanced.conf.d/50-z.conf:2: "
            "/sys/kernel/mm/mmtune/zswap_large/backoff_ms is missing on this kernel (provided "
            "by mmtune.ko feature group zswap_large) and not marked optional") in err


def test_optional_missing_is_skipped_with_a_message(root, run):
    """A module that has the feature group but not the file (older module)."""
    fakeroot.write(root, "sys/kernel/mm/mmtune/swap_slots/cache_size", "64")
    rc, out, err = run("apply", "balanced")
    assert rc == 0
    assert ("skip mmtune.swap_slots.enabled: not on this kernel "
            "(/sys/kernel/mm/mmtune/swap_slots/enabled, provided by mmtune.ko feature group "
            "swap_slots); optional in /usr/lib/mmtune/profiles/balanced.conf:35\n") in out


def test_write_failure_half_way_restores_everything(root, run, monkeypatch):
    # zswap.compressor comes after the sysctls and THP knobs in write order.
    monkeypatch.setattr(Context, "write_raw", fakeroot.failing_writer(ZSWAP + "/compressor", errno.ENOENT))
    err = refused(root, run, "apply", "batch-throughput")
    golden("apply-write-failure.txt", err)
    assert not os.path.exists(os.path.join(root, "run/mmtune/state.json"))


def test_read_back_mismatch_fails_and_restores(root, run, monkeypatch):
    real = Context.write_raw

    def clamping(self, rel, value):   # a kernel that silently changes 100 to 50
        real(self, rel, "50" if rel == SWAPPINESS and value == "100" else value)
    monkeypatch.setattr(Context, "write_raw", clamping)
    err = refused(root, run, "apply", "batch-throughput")
    assert ("error: writing '100' to /proc/sys/vm/swappiness (sysctl.vm.swappiness, "
            "/usr/lib/mmtune/profiles/batch-throughput.conf:16) failed: read back '50': "
            "the kernel did not keep the value\n") in err


def test_second_apply_failure_keeps_first_profile(root, run, monkeypatch):
    assert run("apply", "database")[0] == 0
    applied = fakeroot.snapshot(root)
    state = open(os.path.join(root, "run/mmtune/state.json")).read()
    monkeypatch.setattr(Context, "write_raw", fakeroot.failing_writer(SWAPPINESS))
    assert run("apply", "container-host")[0] == 2
    assert fakeroot.snapshot(root) == applied
    assert open(os.path.join(root, "run/mmtune/state.json")).read() == state


def test_related_knobs_retry_in_the_other_order(root, run, monkeypatch):
    add_all_mmtune_knobs(root)
    d = "sys/kernel/mm/mmtune/swap_slots/"
    real = Context.write_raw

    def kernel(self, rel, value):     # the module's cross-check
        if rel == d + "deactivate_factor" and int(value) >= int(fakeroot.read(root, d + "activate_factor")):
            raise OSError(errno.EINVAL, "Invalid argument")
        if rel == d + "activate_factor" and int(value) <= int(fakeroot.read(root, d + "deactivate_factor")):
            raise OSError(errno.EINVAL, "Invalid argument")
        real(self, rel, value)
    monkeypatch.setattr(Context, "write_raw", kernel)
    # live 5/2; batch wants 8/4: deactivate_factor 4 < 5 works in order.
    assert run("apply", "batch-throughput")[0] == 0
    fakeroot.write(root, "etc/mmtune/profiles/low.conf",
                   "[mmtune.swap_slots]\nactivate_factor = 3\ndeactivate_factor = 2\n")
    fakeroot.write(root, d + "deactivate_factor", "6")
    fakeroot.write(root, d + "activate_factor", "8")
    # deactivate_factor is written after activate_factor: 3 <= 6 refused first.
    rc, out, err = run("apply", "low")
    assert rc == 0, err
    assert (fakeroot.read(root, d + "activate_factor"), fakeroot.read(root, d + "deactivate_factor")) == ("3", "2")


def test_bounds_keep_a_larger_kernel_value(root, run):
    fakeroot.write(root, "proc/sys/vm/min_free_kbytes", "90000")
    assert run("apply", "database")[0] == 0                  # wants >=65536
    assert fakeroot.read(root, "proc/sys/vm/min_free_kbytes") == "90000"
    assert run("apply", "virtualization-host")[0] == 0       # wants >=131072
    assert fakeroot.read(root, "proc/sys/vm/min_free_kbytes") == "131072"
    assert run("apply", "database")[0] == 0                  # judged on the original: 90000
    assert fakeroot.read(root, "proc/sys/vm/min_free_kbytes") == "90000"


def test_result_does_not_depend_on_history(root, tmp_path, run):
    assert run("apply", "balanced")[0] == 0
    direct = fakeroot.snapshot(root)
    for name in ["virtualization-host", "database", "batch-throughput", "balanced"]:
        assert run("apply", name)[0] == 0
    assert fakeroot.snapshot(root) == direct


def test_knobs_of_the_previous_profile_go_back(root, run):
    fakeroot.write(root, "etc/mmtune/profiles/one.conf", "[sysctl]\nvm.swappiness = 1\nvm.page-cluster = 0\n")
    fakeroot.write(root, "etc/mmtune/profiles/two.conf", "[sysctl]\nvm.swappiness = 2\n")
    assert run("apply", "one")[0] == 0
    rc, out, err = run("apply", "two")
    assert rc == 0
    assert out.splitlines()[-2:] == ["restored sysctl.vm.page-cluster = 3 (not in this profile)",
                                     "applied profile two: 1 written, 0 already set, 1 restored, 0 skipped"]
    assert fakeroot.read(root, "proc/sys/vm/page-cluster") == "3"


def test_rollback_restores_the_values_from_before_mmtune(root, run):
    before = fakeroot.snapshot(root)
    assert run("apply", "database")[0] == 0
    assert run("apply", "virtualization-host")[0] == 0
    assert fakeroot.snapshot(root) != before
    rc, out, err = run("rollback")
    assert rc == 0, err
    golden("rollback.txt", out)
    assert fakeroot.snapshot(root) == before
    assert not os.path.exists(os.path.join(root, "run/mmtune/state.json"))
    assert run("rollback")[1] == "nothing to roll back\n"


def test_rollback_failure_restores_and_keeps_state(root, run, monkeypatch):
    assert run("apply", "database")[0] == 0
    applied = fakeroot.snapshot(root)
    monkeypatch.setattr(Context, "write_raw", fakeroot.failing_writer("sys/kernel/mm/transparent_hugepage/defrag"))
    assert run("rollback")[0] == 2
    assert fakeroot.snapshot(root) == applied
    assert os.path.exists(os.path.join(root, "run/mmtune/state.json"))


def test_rollback_skips_knobs_of_an_unloaded_module(root, run):
    assert run("apply", "balanced")[0] == 0
    import shutil
    shutil.rmtree(os.path.join(root, "sys/kernel/mm/mmtune"))
    rc, out, err = run("rollback")
    assert rc == 0
    assert "skip mmtune.zswap_large.enabled: gone from this kernel (/sys/kernel/mm/mmtune/zswap_large/enabled)\n" in out


@pytest.mark.parametrize("cmd", ["apply", "rollback"])
def test_non_root_gets_a_clear_message(root, run, cmd):
    before = fakeroot.snapshot(root)
    rc, out, err = run(cmd, euid=1000)
    assert rc == 4
    assert err == ("mmtunectl %s: writing kernel knobs needs root (running as uid 1000); "
                   "try: sudo mmtunectl %s\n" % (cmd, cmd))
    assert fakeroot.snapshot(root) == before


def test_a_denied_file_is_exit_4_for_any_command(root, run, monkeypatch):
    """Exit 4 is a permission mmtunectl lacked, not only apply/rollback as
    non-root (the manual says so): here a state file the user may not read.
    A profile file it cannot read is bad input like any other: 2, named."""
    assert run("apply", "database")[0] == 0
    real = Context.read

    def read(self, rel):
        if rel == "run/mmtune/state.json":
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), self.path(rel))
        return real(self, rel)
    monkeypatch.setattr(Context, "read", read)
    for args in (["verify"], ["status", "--json"], ["diff"], ["rollback"]):
        rc, out, err = run(*args, euid=1000 if args[0] != "rollback" else 0)
        assert (rc, err) == (4, "error: %s/run/mmtune/state.json: Permission denied "
                             "(are you root?)\n" % root), args
    monkeypatch.setattr(Context, "read", real)
    import mmtunectl.profile
    real_read = mmtunectl.profile.read_file

    def denied(path, *a, **kw):
        if str(path).endswith("/database.conf"):
            raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), path)
        return real_read(path, *a, **kw)
    monkeypatch.setattr(mmtunectl.profile, "read_file", denied)
    rc, out, err = run("show", "database", euid=1000)
    assert (rc, err) == (2, "error: /usr/lib/mmtune/profiles/database.conf: cannot read: "
                         "Permission denied\n")


def test_non_root_can_read(run):
    for args in (["list"], ["show", "database"], ["recommend"], ["status", "--prometheus"],
                 ["check", os.path.join(fakeroot.SYSTEMD, "profiles", "database.conf")]):
        rc, out, err = run(*args, euid=1000)
        assert rc == 0 and err == "", args
    for args in (["verify"], ["status", "--json"], ["diff"], ["apply", "--dry-run"]):
        rc, out, err = run(*args, euid=1000)       # not applied: drift, but no error
        assert rc == (0 if args[0] == "apply" else 1) and err == "", args


def tuned_root(root):
    fakeroot.enable_tuned(root, "site-db")
    fakeroot.write(root, "usr/lib/tuned/throughput-performance/tuned.conf",
                   "[main]\nsummary=x\n[vm]\ntransparent_hugepages=always\n[sysctl]\nvm.dirty_ratio=40\n")
    fakeroot.write(root, "etc/tuned/site-db/tuned.conf",
                   "[main]\ninclude=throughput-performance\n[my_sysctl]\ntype=sysctl\nvm.swappiness=10\n"
                   "[sysfs]\n/sys/module/zswap/parameters/max_pool_*=30\n")


def test_tuned_owned_knobs_are_left_to_tuned(root, run):
    tuned_root(root)
    fakeroot.write(root, "proc/sys/vm/dirty_ratio", "40")
    fakeroot.write(root, "etc/mmtune/profile", "database\n")      # selected, so verify can pass
    rc, out, err = run("apply", "database")
    assert rc == 0
    owned = [l for l in out.splitlines() if "owned by tuned" in l]
    golden("apply-tuned.txt", "\n".join(owned) + "\n")
    assert fakeroot.read(root, SWAPPINESS) == "60"       # tuned's, untouched
    fakeroot.write(root, SWAPPINESS, "10")               # tuned applies its value
    rc, out, err = run("verify")
    assert rc == 0
    assert out.endswith("4 owned by tuned\n")


def test_rollback_leaves_knobs_tuned_took_over(root, run):
    assert run("apply", "database")[0] == 0
    tuned_root(root)                                     # tuned activated later
    rc, out, err = run("rollback")
    assert rc == 0
    assert "skip sysctl.vm.swappiness: owned by tuned profile site-db (/etc/tuned/site-db/tuned.conf)\n" in out
    assert fakeroot.read(root, SWAPPINESS) == "10"
    assert fakeroot.read(root, "proc/sys/vm/dirty_background_ratio") == "10"   # not tuned's: restored
