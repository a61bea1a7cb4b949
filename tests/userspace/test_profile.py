"""Profile parsing, validation, layering, masking, drop-ins and include=."""

import os

import pytest
from conftest import golden

import fakeroot
from mmtunectl.context import Context
from mmtunectl.profile import ConfigError, Loader

ETC = "etc/mmtune/profiles"
VENDOR = "usr/lib/mmtune/profiles"


def load(root, name):
    return Loader(Context(root=root)).load(name)


def errors(root, name):
    with pytest.raises(ConfigError) as e:
        load(root, name)
    return e.value.errors


def wanted(prof):
    return dict((n, s.wanted()) for n, s in prof.settings.items())


def test_values_are_normalised(root):
    fakeroot.write(root, ETC + "/t.conf", """
# comment
; another comment
[main]
summary = test
[zswap]
enabled = yes
same_filled_pages_enabled = off
[thp]
enabled = never
[sysctl]
vm.swappiness = 007
vm.min_free_kbytes = >= 1024
vm.watermark_scale_factor = <=500
[?mmtune.swap_slots]
enabled = true
[mmtune.pcp_high]
?enabled = 0
decay_percent = 5
""")
    prof = load(root, "t")
    assert prof.summary == "test"
    assert wanted(prof) == {
        "zswap.enabled": "Y", "zswap.same_filled_pages_enabled": "N", "thp.enabled": "never",
        "sysctl.vm.swappiness": "7", "sysctl.vm.min_free_kbytes": ">=1024",
        "sysctl.vm.watermark_scale_factor": "<=500", "mmtune.swap_slots.enabled": "1",
        "mmtune.pcp_high.enabled": "0", "mmtune.pcp_high.decay_percent": "5"}
    opt = dict((n, s.optional) for n, s in prof.settings.items())
    assert opt["mmtune.swap_slots.enabled"] and opt["mmtune.pcp_high.enabled"]
    assert not opt["mmtune.pcp_high.decay_percent"] and not opt["sysctl.vm.swappiness"]
    assert prof.settings["sysctl.vm.swappiness"].origin == "/etc/mmtune/profiles/t.conf:12"


def test_every_error_has_file_and_line(root):
    fakeroot.write(root, ETC + "/bad.conf", """[main]
summary = broken on purpose
colour = blue
[sysctl]
vm.swapiness = 10
vm.swappiness = 201
vm.swappiness = 10
vm.page-cluster = three
this line has no equals sign
[thp]
enabled = sometimes
defrag = >=1
[zswap
[zsawp]
enabled = 1
[mmtune.swap_slots]
activate_factor = 3
deactivate_factor = 3
[mmtune.thp_swap]
sample_size = 8
threshold = 9
""")
    golden("errors-bad-profile.txt", "\n".join(errors(root, "bad")) + "\n")


def test_empty_value_unsets_an_inherited_knob(root):
    fakeroot.write(root, ETC + "/child.conf", "[main]\ninclude = database\n[sysctl]\n"
                   "vm.swappiness =\n[thp]\ndefrag = madvise\n")
    prof = load(root, "child")
    assert "sysctl.vm.swappiness" not in prof.settings
    assert prof.settings["thp.defrag"].wanted() == "madvise"
    assert prof.settings["thp.enabled"].wanted() == "never"          # from database
    assert prof.settings["zswap.compressor"].wanted() == "lz4"       # from balanced


def test_include_order_and_origin(root):
    fakeroot.write(root, ETC + "/a.conf", "[sysctl]\nvm.swappiness = 1\nvm.dirty_ratio = 11\n")
    fakeroot.write(root, ETC + "/b.conf", "[sysctl]\nvm.swappiness = 2\n")
    fakeroot.write(root, ETC + "/c.conf", "[main]\ninclude = a, b\n[sysctl]\nvm.page-cluster = 0\n")
    prof = load(root, "c")
    assert wanted(prof) == {"sysctl.vm.swappiness": "2", "sysctl.vm.dirty_ratio": "11",
                            "sysctl.vm.page-cluster": "0"}
    assert prof.settings["sysctl.vm.swappiness"].origin == "/etc/mmtune/profiles/b.conf:2"
    assert prof.files == ["/etc/mmtune/profiles/a.conf", "/etc/mmtune/profiles/b.conf",
                          "/etc/mmtune/profiles/c.conf"]


def test_include_cycle_and_missing_parent(root):
    fakeroot.write(root, ETC + "/x.conf", "[main]\ninclude = y\n")
    fakeroot.write(root, ETC + "/y.conf", "[main]\n\ninclude = x\n")
    fakeroot.write(root, ETC + "/z.conf", "[main]\ninclude = nothere\n")
    assert errors(root, "x") == ["/etc/mmtune/profiles/y.conf:3: include cycle: x -> y -> x"]
    assert errors(root, "z") == [
        "/etc/mmtune/profiles/z.conf:2: no profile 'nothere' (looked in /run/mmtune/profiles, "
        "/etc/mmtune/profiles, /usr/lib/mmtune/profiles)"]


def test_layers_runtime_admin_vendor(root):
    # /etc replaces the vendor file as a whole; /run replaces /etc.
    fakeroot.write(root, ETC + "/database.conf", "[sysctl]\nvm.swappiness = 5\n")
    assert wanted(load(root, "database")) == {"sysctl.vm.swappiness": "5"}
    fakeroot.write(root, "run/mmtune/profiles/database.conf", "[sysctl]\nvm.swappiness = 4\n")
    assert wanted(load(root, "database")) == {"sysctl.vm.swappiness": "4"}


def test_dropins_order_hiding_and_masking(root):
    fakeroot.write(root, VENDOR + "/database.conf.d/10-vendor.conf", "[sysctl]\nvm.swappiness = 11\n")
    fakeroot.write(root, VENDOR + "/database.conf.d/20-hidden.conf", "[sysctl]\nvm.swappiness = 99\n")
    fakeroot.write(root, ETC + "/database.conf.d/20-hidden.conf", "[sysctl]\nvm.dirty_ratio = 12\n")
    fakeroot.write(root, ETC + "/database.conf.d/30-admin.conf", "[sysctl]\nvm.swappiness = 13\n")
    prof = load(root, "database")
    assert prof.settings["sysctl.vm.swappiness"].wanted() == "13"
    assert prof.settings["sysctl.vm.dirty_ratio"].wanted() == "12"
    assert prof.files[-3:] == ["/usr/lib/mmtune/profiles/database.conf.d/10-vendor.conf",
                               "/etc/mmtune/profiles/database.conf.d/20-hidden.conf",
                               "/etc/mmtune/profiles/database.conf.d/30-admin.conf"]
    os.makedirs(os.path.join(root, "run/mmtune/profiles/database.conf.d"))
    os.symlink("/dev/null", os.path.join(root, "run/mmtune/profiles/database.conf.d/30-admin.conf"))
    assert load(root, "database").settings["sysctl.vm.swappiness"].wanted() == "11"


def test_masked_profile(root, run):
    os.makedirs(os.path.join(root, ETC))
    os.symlink("/dev/null", os.path.join(root, ETC, "web-latency.conf"))
    assert errors(root, "web-latency") == [
        "profile 'web-latency' is masked by /etc/mmtune/profiles/web-latency.conf"]
    rc, out, err = run("list")
    assert rc == 0
    golden("list-masked.txt", out)


def test_include_only_in_main_file(root):
    fakeroot.write(root, VENDOR + "/database.conf.d/10-x.conf", "[main]\ninclude = balanced\n")
    assert errors(root, "database") == [
        "/usr/lib/mmtune/profiles/database.conf.d/10-x.conf:2: "
        "include= is only allowed in the main profile file"]


def test_show_resolved_profile(run):
    rc, out, err = run("show", "web-latency")
    assert rc == 0 and err == ""
    golden("show-web-latency.txt", out)


@pytest.mark.parametrize("name", ["balanced", "database", "web-latency", "batch-throughput",
                                  "virtualization-host", "container-host"])
def test_shipped_profiles_are_valid(root, name):
    prof = load(root, name)
    assert prof.summary
    # Optional exactly where not every kernel has the file: every mmtune
    # knob (today's module may not have it) and the per-size mTHP ones.
    for s in prof.settings.values():
        assert s.optional == (s.knob.name.startswith("mmtune.") or bool(s.knob.size)), \
            s.knob.name
    with open(os.path.join(fakeroot.SYSTEMD, "profiles", name + ".conf")) as f:
        assert f.readline().startswith("# %s: " % name), "first line: name and rationale"


def test_knobs_lists_the_schema(run):
    rc, out, err = run("knobs")
    assert rc == 0
    golden("knobs.txt", out)
