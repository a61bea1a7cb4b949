"""Recommend rules and the override order."""

import os

from conftest import golden, refused

import fakeroot


def rec(run, **kw):
    rc, out, err = run("recommend", **kw)
    assert rc == 0, err
    return out


def test_no_rule_matches_on_a_plain_vm(run):
    assert rec(run, virt="kvm") == ("balanced\nreason: recommend rule "
                                    "/usr/lib/mmtune/recommend.rules:38 [balanced]: no conditions\n")


def test_database_binary(root, run):
    fakeroot.write(root, "usr/lib/postgresql/15/bin/postgres", "")
    golden("recommend-database.txt", rec(run, virt="kvm"))


def test_virtualization_host_needs_every_condition(root, run):
    fakeroot.write(root, "usr/sbin/libvirtd", "")
    fakeroot.write(root, "proc/modules", "kvm_intel 380928 0 - Live 0x0\nkvm 1146880 1 kvm_intel\n")
    fakeroot.write(root, "proc/meminfo", "MemTotal:       65536000 kB\n")
    golden("recommend-virt-host.txt", rec(run, virt="none"))
    # Inside a VM (nested), or when virt cannot be detected: not a host.
    assert rec(run, virt="kvm").startswith("balanced\n")
    assert rec(run).startswith("balanced\n")
    fakeroot.write(root, "proc/meminfo", "MemTotal:       8000000 kB\n")
    assert rec(run, virt="none").startswith("balanced\n")


def test_unknown_fact_never_matches_even_negated(root, run):
    fakeroot.write(root, "etc/mmtune/recommend.rules.d/10-site.rules",
                   "[web-latency]\nvirt=!none\n[database]\nchassis=!rack-mount\n"
                   "[container-host]\nvirt=unknown\n")
    os.unlink(os.path.join(root, "sys/class/dmi/id/chassis_type"))
    out = rec(run)      # no systemd-detect-virt: the first two rules cannot tell
    assert out.startswith("container-host\nreason: recommend rule "
                          "/etc/mmtune/recommend.rules.d/10-site.rules:5 [container-host]: virt=unknown")
    assert rec(run, virt="kvm").startswith("web-latency\n")


def test_cpu_and_memory_ranges_and_chassis(root, run):
    fakeroot.write(root, "etc/mmtune/recommend.rules",
                   "[database]\ncpus=>=64\n[web-latency]\ncpus=2..4\nmem=1G..3G\nchassis=other|rack-mount\n"
                   "[balanced]\n")
    assert rec(run).startswith("web-latency\nreason: recommend rule /etc/mmtune/recommend.rules:3 "
                               "[web-latency]: cpus=2..4, mem=1G..3G, chassis=other|rack-mount\n")
    fakeroot.write(root, "sys/devices/system/cpu/online", "0-63,64-127")
    assert rec(run).startswith("database\n")
    os.unlink(os.path.join(root, "sys/devices/system/cpu/online"))
    fakeroot.write(root, "proc/cpuinfo", "processor\t: 0\nprocessor\t: 1\nprocessor\t: 2\n")
    assert rec(run).startswith("web-latency\n")


def test_overrides_beat_rules_in_order(root, run):
    fakeroot.write(root, "usr/sbin/nginx", "")
    assert rec(run).startswith("web-latency\n")
    fakeroot.write(root, "etc/mmtune/profile", "# set by config management\ndatabase\n")
    assert rec(run) == "database\nreason: override in /etc/mmtune/profile\n"
    fakeroot.write(root, "run/mmtune/profile", "container-host\n")
    assert rec(run) == "container-host\nreason: override in /run/mmtune/profile\n"
    fakeroot.write(root, "proc/cmdline", "root=/dev/vda mmtune.profile=batch-throughput quiet")
    assert rec(run) == "batch-throughput\nreason: kernel command line mmtune.profile=batch-throughput\n"
    assert rec(run, virt="kvm") == rec(run)
    rc, out, err = run("recommend", "--no-override")
    assert out.startswith("web-latency\n")


def test_rules_file_masked_and_dropin_masked(root, run):
    fakeroot.write(root, "usr/lib/mmtune/recommend.rules.d/50-vendor.rules", "[database]\n")
    assert rec(run).startswith("database\n")
    os.makedirs(os.path.join(root, "etc/mmtune/recommend.rules.d"))
    os.symlink("/dev/null", os.path.join(root, "etc/mmtune/recommend.rules.d/50-vendor.rules"))
    assert rec(run).startswith("balanced\nreason: recommend rule /usr/lib/mmtune/recommend.rules:")
    os.symlink("/dev/null", os.path.join(root, "etc/mmtune/recommend.rules"))
    assert rec(run) == "balanced\nreason: no override and no recommend rule matched\n"


def test_bad_rules_are_errors_with_file_and_line(root, run):
    fakeroot.write(root, "etc/mmtune/recommend.rules",
                   "[database]\nram=>=4G\ncpus=lots\ncontent=/proc/modules:kvm(\n[bad name]\n")
    rc, out, err = run("recommend")
    assert rc == 2 and out == ""
    golden("recommend-bad-rules.txt", err)


def test_bad_override_names_file_and_line(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "\n../etc/passwd\n")
    assert refused(root, run, "recommend") == (
        "error: /etc/mmtune/profile:2: not a profile name (letters, digits, '_', '.', '-')\n")


def test_facts_verbose(root, run):
    rc, out, err = run("recommend", "-v", virt="xen")
    assert out.splitlines()[-1] == "facts: chassis=other, cpus=2, mem=2078593024, virt=xen"


def test_unreadable_override_and_rules_are_errors_with_the_file(root, run):
    with open(os.path.join(root, "etc/mmtune/profile"), "wb") as f:
        f.write(b"\xffdatabase\n")
    rc, out, err = run("recommend")
    assert (rc, err) == (2, "error: /etc/mmtune/profile: not UTF-8 text (byte 0)\n")
    os.unlink(os.path.join(root, "etc/mmtune/profile"))
    os.makedirs(os.path.join(root, "etc/mmtune/recommend.rules.d/10-x.rules"))
    rc, out, err = run("apply", "--auto")
    assert rc == 2
    assert err.startswith("error: /etc/mmtune/recommend.rules.d/10-x.rules: cannot read: Is a directory\n")


def test_rules_are_parsed_like_profiles(root, run):
    """Header and inline comments (issue 28, point 5): a rule whose header
    carries a comment is a rule, first line of the file or further down."""
    fakeroot.write(root, "etc/mmtune/recommend.rules.d/10-edge.rules",
                   "[web-latency]  # edge\nfile=/usr/sbin/nginx   # the proxy\n"
                   "# next\n[database]\t# db\ncpus=>=1\n")
    fakeroot.write(root, "usr/sbin/nginx", "")
    rc, out, err = run("apply", "--auto")
    assert (rc, err) == (0, "")
    assert out.startswith("profile web-latency (recommend rule "
                          "/etc/mmtune/recommend.rules.d/10-edge.rules:1 [web-latency]: "
                          "file=/usr/sbin/nginx)\n")
    os.unlink(os.path.join(root, "usr/sbin/nginx"))
    assert rec(run).startswith(
        "database\nreason: recommend rule /etc/mmtune/recommend.rules.d/10-edge.rules:4 ")


def test_the_first_pick_is_kept_until_an_operator_changes_it(root, run):
    """Issue 28, point 6: installing mysqld beside containerd must not move
    a running host to another profile at the next boot."""
    import json
    fakeroot.write(root, "usr/bin/containerd", "")
    rc, out, err = run("apply", "--auto")
    assert rc == 0 and out.startswith("profile container-host (recommend rule ")
    assert fakeroot.read(root, "var/lib/mmtune/auto-profile").endswith("\ncontainer-host")
    fakeroot.write(root, "usr/sbin/mysqld", "")            # a package pulled in a server
    fakeroot.write(root, "usr/lib/mmtune/recommend.rules",  # database first, say
                   "[database]\nfile=/usr/sbin/mysqld\n[container-host]\nfile=/usr/bin/containerd\n")
    assert rec(run).startswith("database\nreason: recommend rule ")
    assert rec(run).endswith("recorded: container-host (apply --auto keeps it; "
                             "`mmtunectl recommend --reset` to pick again)\n")
    rc, out, err = run("apply", "--auto")                   # the next boot
    assert rc == 0 and out.startswith("profile container-host (recorded in "
                                      "/var/lib/mmtune/auto-profile by the first apply --auto ")
    assert fakeroot.read(root, "proc/sys/vm/swappiness") == "60"
    rc, out, err = run("status", "--json")
    doc = json.loads(out)
    assert (rc, doc["recommended_profile"], doc["recorded_profile"]) == \
        (0, "database", "container-host")
    assert doc["profile"]["source"] == "recorded"
    rc, out, err = run("status", "--prometheus")
    assert "mmtune_recommendation_differs 1\n" in out and "mmtune_ok 1\n" in out
    rc, out, err = run("status")
    assert ("recommend: the rules pick database now; the recorded pick container-host is kept "
            "(mmtunectl recommend --reset to pick again)\n") in out
    assert run("recommend", "--reset", euid=1000)[0] == 4
    rc, out, err = run("recommend", "--reset")
    assert out.startswith("forgot the recorded pick container-host; ")
    rc, out, err = run("apply", "--auto")
    assert rc == 0 and out.startswith("profile database (recommend rule ")
    assert fakeroot.read(root, "proc/sys/vm/swappiness") == "10"


def test_an_override_is_not_recorded(root, run):
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    assert run("apply", "--auto")[0] == 0
    assert not os.path.exists(os.path.join(root, "var/lib/mmtune/auto-profile"))
