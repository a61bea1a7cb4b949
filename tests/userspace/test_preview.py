"""Preview and validation (issue 16, point 3): apply --dry-run, diff,
check FILE; inline comments and the manual's own example profile."""

import os
import re

import pytest

import fakeroot

ETC = "etc/mmtune/profiles"


def test_dry_run_prints_each_change_and_writes_nothing(root, run):
    before = fakeroot.snapshot(root)
    rc, out, err = run("apply", "--dry-run", "database", euid=1000)
    assert (rc, err) == (0, "")
    lines = out.splitlines()
    assert "would set sysctl.vm.swappiness: 60 -> 10 (/usr/lib/mmtune/profiles/database.conf:16)" in lines
    assert "would set thp.enabled: madvise -> never (/usr/lib/mmtune/profiles/database.conf:23)" in lines
    assert lines[-1] == ("dry run: profile database: 10 would be written, 3 already set, "
                         "0 restored, 10 skipped; nothing written")
    assert fakeroot.snapshot(root) == before
    assert not os.path.exists(os.path.join(root, "run/mmtune"))
    # The same changes as a real apply makes.
    rc, real, _ = run("apply", "database")
    sets = [l for l in real.splitlines() if l.startswith("set ")]
    assert len(sets) == 10


def test_diff_exit_status_and_restores(root, run):
    rc, out, err = run("diff", "database")
    assert rc == 1
    assert "change sysctl.vm.swappiness: 60 -> 10 (/usr/lib/mmtune/profiles/database.conf:16)\n" in out
    assert out.splitlines()[-1] == ("diff: profile database (mmtunectl apply database): "
                                    "10 knob(s) would change")
    assert run("apply", "database")[0] == 0
    rc, out, err = run("diff", "database")
    assert rc == 0 and out.endswith("no change, the kernel holds it\n")
    fakeroot.write(root, ETC + "/small.conf", "[sysctl]\nvm.swappiness = 10\n")
    rc, out, err = run("diff", "small")
    assert rc == 1
    assert ("change sysctl.vm.dirty_ratio: 10 -> 20 (saved original: not in profile small)\n") in out
    rc, out, err = run("diff")                  # what apply --auto would do
    assert rc == 1 and "diff: profile balanced (recommend rule " in out


def test_diff_with_a_dropin_not_deployed_yet(root, run, tmp_path):
    assert run("apply", "database")[0] == 0
    new = tmp_path / "50-ansible.conf"
    new.write_text("[sysctl]\nvm.swappiness = 20\n")
    rc, out, err = run("diff", "database", "--dropin", str(new))
    assert rc == 1
    assert "change sysctl.vm.swappiness: 10 -> 20 (%s:2)\n" % new in out
    new.write_text("[sysctl]\nvm.swappiness = 2000\n")
    rc, out, err = run("diff", "database", "--dropin", str(new))
    assert rc == 2 and "%s:2: sysctl.vm.swappiness: 2000 is out of range" % new in err


def test_check_a_valid_file(root, run):
    for name in os.listdir(os.path.join(fakeroot.SYSTEMD, "profiles")):
        path = os.path.join(fakeroot.SYSTEMD, "profiles", name)
        rc, out, err = run("check", path)
        assert (rc, err) == (0, ""), err
        assert re.match(r"^%s: ok, \d+ knob\(s\), checked on its own \(--profile NAME or "
                        r"FILE=PATH checks it in the profiles that read it\)\n$" % re.escape(path), out)


def test_check_reports_every_error_with_file_and_line(root, run, tmp_path):
    bad = tmp_path / "tmpXYZ"              # Ansible's validate: a temporary name
    bad.write_text("[main]\ninclude = nosuch\n[sysctl]\nvm.swapiness = 1\n"
                   "[mmtune.swap_slots]\nactivate_factor = 3\ndeactivate_factor = 3\n"
                   "[zswap]\nmax_pool_percent = 101   # too much\n")
    rc, out, err = run("check", str(bad))
    assert rc == 2 and out == ""
    assert err.splitlines() == [
        "error: %s:4: unknown key 'vm.swapiness' in [sysctl] (did you mean 'vm.swappiness'?)" % bad,
        "error: %s:9: zswap.max_pool_percent: 101 is out of range (1..100)" % bad,
        "error: %s:2: no profile 'nosuch' (looked in /run/mmtune/profiles, /etc/mmtune/profiles, "
        "/usr/lib/mmtune/profiles)" % bad,
        "error: %s:7: mmtune.swap_slots.deactivate_factor = 3 must be < "
        "mmtune.swap_slots.activate_factor = 3 (%s:6)" % (bad, bad)]


@pytest.mark.parametrize("content,message", [
    (b"[sysctl]\nvm.swappiness = \xff\n", "not UTF-8 text (byte 25)"),
    (None, "cannot read: Is a directory"),
    ("missing", "cannot read: No such file or directory"),
])
def test_check_unreadable_files(root, run, tmp_path, content, message):
    p = tmp_path / "x.conf"
    if content is None:
        p.mkdir()
    elif content != "missing":
        p.write_bytes(content)
    rc, out, err = run("check", str(p))
    assert rc == 2 and err == "error: %s: %s\n" % (p, message)


def test_an_unreadable_dropin_is_an_error_and_nothing_is_written(root, run):
    before = fakeroot.snapshot(root)
    fakeroot.write(root, ETC + "/database.conf.d/50-x.conf", "")
    with open(os.path.join(root, ETC, "database.conf.d/50-x.conf"), "wb") as f:
        f.write(b"[sysctl]\n\xfe\n")
    rc, out, err = run("apply", "database")
    assert rc == 2
    assert err == ("error: /etc/mmtune/profiles/database.conf.d/50-x.conf: not UTF-8 text (byte 9)\n"
                   "error: nothing applied\n")
    assert fakeroot.snapshot(root) == before


def test_inline_comments(root, run):
    fakeroot.write(root, ETC + "/c.conf", "[sysctl]   # the vm sysctls\n"
                   "vm.swappiness = 10\t# low\nvm.dirty_ratio =        # not managed\n")
    rc, out, err = run("show", "c")
    assert rc == 0, err
    assert "sysctl.vm.swappiness                      10             # /etc/mmtune/profiles/c.conf:2" in out
    assert "dirty_ratio" not in out


def test_the_manuals_example_profile_is_valid(root, run):
    """mmtune.conf(5), EXAMPLE: the example profile must parse."""
    text = open(os.path.join(fakeroot.REPO, "packaging", "man", "mmtune.conf.5")).read()
    example = re.search(r"^\.SH EXAMPLE\n\.nf\n(.*?)^\.fi$", text, re.S | re.M).group(1)
    example = example.replace("\\-", "-")
    fakeroot.write(root, ETC + "/example.conf", example)
    rc, out, err = run("show", "example")
    assert (rc, err) == (0, "")
    rc, out, err = run("check", os.path.join(root, ETC, "example.conf"))
    assert (rc, err) == (0, "")


SWAP_SLOTS = "[?mmtune.swap_slots]\ndeactivate_factor = 8\n"


def test_check_resolves_the_profiles_a_file_is_for(root, run, tmp_path):
    """Issue 28, point 4: a drop-in valid on its own that clashes with what
    a profile including it sets is an error with its file and line."""
    new = tmp_path / "new.conf"
    new.write_text(SWAP_SLOTS)
    dest = os.path.join(root, "etc/mmtune/profiles/web-latency.conf.d/50-local.conf")
    assert run("check", str(new))[0] == 0                   # on its own: fine
    rc, out, err = run("check", "%s=%s" % (new, dest))
    assert rc == 2
    assert ("error: %s:2: mmtune.swap_slots.deactivate_factor = 8 must be < "
            "mmtune.swap_slots.activate_factor = 5 (/usr/lib/mmtune/profiles/web-latency.conf:26)\n"
            % new) in err
    assert not os.path.exists(dest)
    rc, out, err = run("check", "--profile", "web-latency", str(new))      # its drop-in
    assert rc == 2 and "must be < mmtune.swap_slots.activate_factor = 5" in err
    new.write_text("[?mmtune.swap_slots]\ndeactivate_factor = 3\n")
    rc, out, err = run("check", "%s=%s" % (new, dest.replace("web-latency", "balanced")))
    assert (rc, err) == (0, "")
    # Every profile that includes balanced reads it, so each is resolved.
    for name in ("balanced", "web-latency", "database", "container-host"):
        assert "profile %s: ok, " % name in out


def test_check_an_override_and_rules_in_place(root, run, tmp_path):
    new = tmp_path / "profile"
    new.write_text("# managed by Ansible\ndatabse\n")
    rc, out, err = run("check", "%s=%s/etc/mmtune/profile" % (new, root))
    assert rc == 2 and "error: no profile 'databse'" in err
    assert not os.path.exists(os.path.join(root, "etc/mmtune/profile"))
    rules = tmp_path / "10-site.rules"
    rules.write_text("[web-latency]  # edge\nfile=/usr/sbin/nginx\n\n[database]\nram=>=4G\n")
    rc, out, err = run("check", "%s=/etc/mmtune/recommend.rules.d/10-site.rules" % rules)
    assert rc == 2
    assert "error: %s:5: unknown condition 'ram'" % rules in err
    rc, out, err = run("check", str(rules))         # a .rules file anywhere: as a drop-in
    assert rc == 2 and "error: %s:5: unknown condition 'ram'" % rules in err
    rules.write_text("[web-latency]  # edge\nfile=/usr/sbin/nginx\n")
    fakeroot.write(root, "usr/sbin/nginx", "")
    rc, out, err = run("check", "%s=/etc/mmtune/recommend.rules.d/10-site.rules" % rules)
    assert (rc, err) == (0, "")
    assert out.startswith("selected profile: web-latency (recommend rule %s:1 " % rules)


def test_diff_dropin_replaces_the_deployed_one_of_its_name(root, run, tmp_path):
    deployed = "etc/mmtune/profiles/database.conf.d/50-ansible.conf"
    fakeroot.write(root, deployed, "[thp]\ndefrag = always\n")
    assert run("apply", "database")[0] == 0
    assert fakeroot.read(root, "sys/kernel/mm/transparent_hugepage/defrag").startswith("[always]")
    new = tmp_path / "50-ansible.conf"
    new.write_text("[sysctl]\nvm.swappiness = 10\n")        # the defrag override is gone
    rc, out, err = run("diff", "database", "--dropin", str(new))
    assert rc == 1
    assert "change thp.defrag: always -> never (/usr/lib/mmtune/profiles/database.conf:24)\n" in out


def test_ansible_role_validates_before_it_writes():
    """The role renders and checks both files before the first write,
    validates each deployed file in place, and applies through systemd."""
    role = os.path.join(fakeroot.SYSTEMD, "examples", "ansible", "roles", "mmtune")
    tasks = open(os.path.join(role, "tasks", "main.yml")).read()
    first_write = tasks.index("- name: Pin the mmtune profile")
    assert tasks.index("'check', '--profile', mmtune_profile") < first_write
    pin = tasks[first_write:tasks.index("- name: Drop-in directory")]
    assert "validate: \"{{ mmtune_ctl }} check --profile {{ mmtune_profile }} %s={{ mmtune_etc }}/profile\"" in pin
    assert "%s={{ mmtune_etc }}/profiles/{{ mmtune_profile }}.conf.d/50-ansible.conf" in tasks
    handler = open(os.path.join(role, "handlers", "main.yml")).read()
    assert "'systemctl', 'reload-or-restart', 'mmtune.service'" in handler
