"""The install contract, the installed entry script, systemd units, and the
static checks (vermin for python3.9, ansible syntax) that need the tools
venv. The last ones run when MMTUNE_TOOLS_VENV names it (tests/userspace/run.sh)."""

import os
import shutil
import subprocess
import sys

import pytest
from conftest import TOOLS, needs_tools

import fakeroot

UNITS = ["mmtune.service", "mmtune-reapply.service", "mmtune-metrics.service",
         "mmtune-metrics.timer"]


@pytest.fixture(scope="module")
def staged(tmp_path_factory):
    dest = str(tmp_path_factory.mktemp("destdir"))
    subprocess.run(["make", "-s", "-C", fakeroot.SYSTEMD, "install", "DESTDIR=" + dest,
                    "PREFIX=/usr", "SYSCONFDIR=/etc", "UNITDIR=/usr/lib/systemd/system",
                    "UDEVRULESDIR=/usr/lib/udev/rules.d"],
                   check=True)
    return dest


def test_install_layout(staged):
    files = sorted(os.path.relpath(os.path.join(d, f), staged)
                   for d, _, fs in os.walk(staged) for f in fs)
    py = sorted(f for f in os.listdir(os.path.join(fakeroot.SYSTEMD, "mmtunectl")) if f.endswith(".py"))
    profiles = sorted(os.listdir(os.path.join(fakeroot.SYSTEMD, "profiles")))
    assert files == sorted(
        ["usr/sbin/mmtunectl", "usr/lib/mmtune/recommend.rules",
         "usr/lib/systemd/system/mmtune.service", "usr/lib/systemd/system/mmtune-reapply.service",
         "usr/lib/systemd/system/mmtune-metrics.service",
         "usr/lib/systemd/system/mmtune-metrics.timer",
         "usr/lib/systemd/system/mmtune.service.d/10-modprobe.conf",
         "usr/lib/systemd/system/mmtune.service.d/50-hardening.conf",
         "usr/lib/mmtune/python/mmtunectl/knobs.tsv",
         "usr/lib/systemd/system/swap.d/50-mmtune.conf",
         "usr/lib/udev/rules.d/60-mmtune.rules", "usr/share/doc/mmtune/mmtunectl.md",
         "usr/lib/mmtune/dashboards/mmtune.json"]
        + ["usr/lib/mmtune/python/mmtunectl/" + f for f in py]
        + ["usr/lib/mmtune/profiles/" + f for f in profiles])
    assert os.listdir(os.path.join(staged, "etc/mmtune")) == []
    assert os.access(os.path.join(staged, "usr/sbin/mmtunectl"), os.X_OK)
    script = open(os.path.join(staged, "usr/sbin/mmtunectl")).read()
    assert 'sys.path.insert(0, "/usr/lib/mmtune/python")' in script and "@" not in script


def test_installed_script_runs(tmp_path, root):
    """The entry script as installed, with its package dir substituted."""
    dest = str(tmp_path / "d")
    subprocess.run(["make", "-s", "-C", fakeroot.SYSTEMD, "install", "PREFIX=" + dest + "/usr",
                    "SYSCONFDIR=" + dest + "/etc", "PYDIR=" + dest + "/py"], check=True)
    # LIBDIR is now under dest: the vendor files come from there, not from root.
    shutil.rmtree(os.path.join(root, "usr/lib/mmtune"))
    os.makedirs(os.path.join(root, dest.lstrip("/"), "usr/lib"))
    os.symlink(dest + "/usr/lib/mmtune", os.path.join(root, dest.lstrip("/"), "usr/lib/mmtune"))
    p = subprocess.run([os.path.join(dest, "usr/sbin/mmtunectl"), "--root", root, "show", "balanced"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("profile balanced: General purpose")
    assert not os.path.exists(os.path.join(dest, "py/mmtunectl/__pycache__"))


def test_systemd_analyze_verify(staged, tmp_path):
    if not os.path.exists("/usr/bin/systemd-analyze"):
        pytest.skip("no systemd-analyze")
    # A copy: the stubs below are not part of the install.
    root = str(tmp_path / "root")
    shutil.copytree(staged, root, symlinks=True)
    staged = root
    # ExecStart binaries must exist: verify against the staged tree, with
    # the one program of the host a unit calls.
    # Units with default dependencies need the host's standard targets.
    import glob
    for t in glob.glob("/lib/systemd/system/*.target") + glob.glob("/lib/systemd/system/*.slice"):
        dst = os.path.join(staged, "usr/lib/systemd/system", os.path.basename(t))
        if not os.path.exists(dst) and os.path.isfile(t):
            shutil.copy(t, dst)
    fakeroot.write(staged, "usr/bin/systemctl", "")
    os.chmod(os.path.join(staged, "usr/bin/systemctl"), 0o755)
    units = [os.path.join(staged, "usr/lib/systemd/system", u) for u in UNITS]
    # A swap unit, so that the swap.d drop-in is loaded and checked too.
    fakeroot.write(staged, "etc/systemd/system/dev-vdb.swap", "[Swap]\nWhat=/dev/vdb\n")
    units.append(os.path.join(staged, "etc/systemd/system/dev-vdb.swap"))
    p = subprocess.run(["systemd-analyze", "verify", "--man=no", "--root=" + staged] + units,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    ours = [l for l in p.stdout.splitlines() if "mmtune" in l or "dev-vdb" in l]
    assert p.returncode == 0 and not ours, p.stdout


def test_units_content(staged):
    svc = open(os.path.join(staged, "usr/lib/systemd/system/mmtune.service")).read()
    for line in ("Type=oneshot", "RemainAfterExit=yes", "ExecStart=/usr/sbin/mmtunectl apply --auto",
                 "ExecStop=/usr/sbin/mmtunectl rollback", "After=systemd-modules-load.service",
                 "WantedBy=sysinit.target"):
        assert line in svc.splitlines() or any(l.startswith(line) for l in svc.splitlines()), line
    assert "Before=swap.target" in svc
    # mmtune.ko comes from systemd's modprobe@ (quiet on a kernel without
    # it), not from a modules-load.d entry.
    dropin = open(os.path.join(staged, "usr/lib/systemd/system/mmtune.service.d/10-modprobe.conf")).read()
    assert "Wants=modprobe@mmtune.service" in dropin.splitlines()
    assert "After=modprobe@mmtune.service" in dropin.splitlines()


@needs_tools
def test_vermin_python39(staged):
    p = subprocess.run([os.path.join(TOOLS, "bin/vermin"), "--no-tips", "--violations", "-t=3.9-",
                        "--eval-annotations",
                        os.path.join(fakeroot.SYSTEMD, "mmtunectl"),
                        os.path.join(staged, "usr/sbin/mmtunectl")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert p.returncode == 0, p.stdout


@needs_tools
def test_ansible_example_syntax(tmp_path):
    ex = os.path.join(fakeroot.SYSTEMD, "examples", "ansible")
    env = dict(os.environ, ANSIBLE_LOCAL_TEMP=str(tmp_path), ANSIBLE_HOME=str(tmp_path),
               ANSIBLE_ROLES_PATH=os.path.join(ex, "roles"), ANSIBLE_NOCOLOR="1")
    p = subprocess.run([os.path.join(TOOLS, "bin/ansible-playbook"), "--syntax-check",
                        "-i", "localhost,", os.path.join(ex, "site.yml")],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                       env=env, cwd=ex)
    assert p.returncode == 0, p.stdout
    assert "playbook: " in p.stdout


@needs_tools
def test_ansible_role_check_diff_then_apply(root, tmp_path):
    """The role against a fake root: --check --diff changes nothing and shows
    the kernel values that would change (including the override not deployed
    yet) and the stale drop-in of a renamed profile. With MMTUNE_SLOW_TESTS=1
    (each play costs seconds) also: the real run validates, applies, removes
    the stale drop-in and verifies; a second run changes nothing; a bad
    override is refused by validate: with file and line."""
    ex = os.path.join(fakeroot.SYSTEMD, "examples", "ansible")
    ctl = os.path.join(fakeroot.REPO, "tests", "userspace", "mmtunectl-dev")
    stale = os.path.join(root, "etc/mmtune/profiles/balanced.conf.d/50-ansible.conf")
    fakeroot.write(root, "etc/mmtune/profiles/balanced.conf.d/50-ansible.conf",
                   "[sysctl]\nvm.swappiness = 33\n")                # from an earlier profile
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: localhost\n  connection: local\n  gather_facts: false\n  roles:\n"
        "    - role: mmtune\n      vars:\n        mmtune_profile: database\n"
        "        mmtune_ctl: %s\n        mmtune_etc: %s/etc/mmtune\n"
        "        mmtune_manage_service: false\n"
        "        mmtune_overrides: {sysctl: {vm.swappiness: 20}}\n" % (ctl, root))
    env = dict(os.environ, ANSIBLE_LOCAL_TEMP=str(tmp_path), ANSIBLE_HOME=str(tmp_path),
               ANSIBLE_ROLES_PATH=os.path.join(ex, "roles"), ANSIBLE_NOCOLOR="1",
               ANSIBLE_PYTHON_INTERPRETER=sys.executable, MMTUNE_ROOT=root,
               ANSIBLE_LOCALHOST_WARNING="0", ANSIBLE_INVENTORY_UNPARSED_WARNING="0")
    before = fakeroot.snapshot(root)

    def play_run(*opts):
        return subprocess.run([os.path.join(TOOLS, "bin/ansible-playbook"), "-i", "localhost,"]
                              + list(opts) + [str(play)], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, universal_newlines=True, env=env)
    p = play_run("--check", "--diff")
    assert p.returncode == 0, p.stdout
    assert "change sysctl.vm.swappiness: 60 -> 20" in p.stdout        # the new override
    assert "change thp.enabled: madvise -> never" in p.stdout         # the new profile
    assert "+vm.swappiness = 20" in p.stdout                           # the file diff
    assert "changed: [localhost] => (item=%s)" % stale in p.stdout    # stale drop-in
    assert fakeroot.snapshot(root) == before
    assert os.path.exists(stale) and not os.path.exists(os.path.join(root, "etc/mmtune/profile"))
    if not os.environ.get("MMTUNE_SLOW_TESTS"):
        return
    p = play_run()
    assert p.returncode == 0, p.stdout
    assert fakeroot.read(root, "proc/sys/vm/swappiness") == "20"
    assert fakeroot.read(root, "etc/mmtune/profile").endswith("database")
    assert not os.path.exists(stale)
    p = play_run()
    assert p.returncode == 0 and "changed=0" in p.stdout, p.stdout
    play.write_text(play.read_text().replace("vm.swappiness: 20", "vm.swapiness: 20"))
    p = play_run()
    assert p.returncode != 0 and "unknown key 'vm.swapiness' in [sysctl]" in p.stdout
    assert "swapiness" not in fakeroot.read(root, "etc/mmtune/profiles/database.conf.d/50-ansible.conf")
    # A misspelt profile fails before anything is written (issue 28, point 4).
    play.write_text(play.read_text().replace("vm.swapiness: 20", "vm.swappiness: 20")
                    .replace("mmtune_profile: database", "mmtune_profile: databse"))
    before = fakeroot.snapshot(root), fakeroot.read(root, "etc/mmtune/profile")
    p = play_run()
    assert p.returncode != 0 and "no profile 'databse'" in p.stdout, p.stdout
    assert (fakeroot.snapshot(root), fakeroot.read(root, "etc/mmtune/profile")) == before
    assert not os.path.exists(os.path.join(root, "etc/mmtune/profiles/databse.conf.d"))
