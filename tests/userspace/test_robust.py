"""Files that are not what they should be: text that is not UTF-8 in files
of other programs (sysctl.d, /proc/cmdline), an unusable recorded pick,
and profile paths holding a dangling symlink, a FIFO, a device, a huge
file or a symlink to a foreign file. Never a crash, never a hang, never an
echo of a foreign file's content; a profile that cannot be read is an
error, never a silent fall back to the vendor's."""

import contextlib
import json
import os
import signal

import pytest

import fakeroot

ETC = "etc/mmtune/profiles/"
RECORD = "var/lib/mmtune/auto-profile"


def write_bytes(root, rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


@contextlib.contextmanager
def deadline(seconds=20):
    """Fail instead of hanging (a FIFO opened for reading blocks)."""
    def expired(*_):
        raise AssertionError("mmtunectl blocked for %d s" % seconds)
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def test_latin1_sysctl_d_and_cmdline(root, run, tmp_path):
    """A Latin-1 sysctl.d file and /proc/cmdline: every command works; the
    file's undecodable line is skipped, its valid lines still count."""
    write_bytes(root, "etc/sysctl.d/90-fr.conf", b"# R\xe9glages m\xe9moire\nvm.swappiness = 5\n"
                                                 b"vm.dirty_ratio = 3 # \xe9t\xe9\n")
    write_bytes(root, "proc/cmdline", b"BOOT_IMAGE=/vmlinuz ro quiet x=caf\xe9 "
                                      b"mmtune.profile=database\n")
    rc, out, err = run("diff")
    assert (rc, err) == (1, "")
    notes = [l for l in out.splitlines() if l.startswith("note:")]
    assert notes == ["note: sysctl.vm.swappiness: /etc/sysctl.d/90-fr.conf:2 sets 5 at boot; "
                     "the profile's 10 wins (mmtune.service runs after "
                     "systemd-sysctl.service; `sysctl --system` would put it back)"]
    rc, out, err = run("apply", "--auto")
    assert (rc, err) == (0, "")
    assert out.startswith("profile database (kernel command line mmtune.profile=database)")
    assert fakeroot.read(root, "proc/sys/vm/swappiness") == "10"
    assert run("verify")[0] == 0
    rc, out, err = run("status")
    assert rc == 0 and "health: ok (exit 0)" in out
    prom = str(tmp_path / "mmtune.prom")
    assert run("status", "--prometheus", "--output", prom)[0] == 0
    assert "mmtune_ok 1\n" in open(prom).read()


def test_recommend_reset_clears_a_corrupt_record(root, run):
    write_bytes(root, RECORD, b"\xff\xfe\x00garbage\n")
    rc, out, err = run("recommend", "--reset")
    assert (rc, err) == (0, "")
    assert out.startswith("forgot the recorded pick (an unusable /var/lib/mmtune/auto-profile);")
    assert not os.path.lexists(os.path.join(root, RECORD))
    assert run("recommend", "--reset")[1].startswith("no recorded pick\n")


@pytest.mark.parametrize("record", [b"# reason: x\nold-db\n", b"\xffold\n"])
def test_boot_with_an_unusable_record_picks_by_the_rules(root, run, record):
    """A record naming a profile since removed, or one that cannot be read:
    the boot says what to do, applies what the rules pick and records it."""
    write_bytes(root, RECORD, record)
    rc, out, err = run("apply", "--auto")
    assert (rc, err) == (0, "")
    warn = out.splitlines()[0]
    assert warn.startswith("warning: /var/lib/mmtune/auto-profile")
    assert warn.endswith(": ignored, the rules pick again and the next apply --auto records "
                         "their pick (`mmtunectl recommend --reset` removes it now; "
                         "/etc/mmtune/profile names a profile for good)")
    if b"old-db" in record:
        assert "records profile 'old-db', which no longer exists" in warn
    assert out.splitlines()[1].startswith("profile balanced (recommend rule ")
    assert fakeroot.read(root, RECORD).endswith("\nbalanced")
    rc, out, err = run("apply", "--auto")
    assert rc == 0 and not out.startswith("warning")
    assert out.startswith("profile balanced (recorded in /var/lib/mmtune/auto-profile")


def test_a_record_naming_a_masked_profile(root, run):
    write_bytes(root, RECORD, b"database\n")
    place(root, ETC + "database.conf", "symlink", "/dev/null")
    rc, out, err = run("verify")
    assert ("warning: /var/lib/mmtune/auto-profile: records profile 'database', which is "
            "masked by /etc/mmtune/profiles/database.conf: ignored") in out


def place(root, rel, kind, target=None):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    else:
        os.symlink(target, path)


@pytest.mark.parametrize("rel", [ETC + "database.conf", ETC + "database.conf.d/50-x.conf"])
@pytest.mark.parametrize("kind,target,why", [
    ("symlink", "/no/such/file", "dangling symlink to /no/such/file"),
    ("fifo", None, "not a regular file (a FIFO)"),
    ("symlink", "/dev/zero", "not a regular file (a character device)"),
])
def test_a_profile_path_that_is_not_a_file_is_an_error(root, run, rel, kind, target, why):
    place(root, rel, kind, target)
    before = fakeroot.snapshot(root)
    with deadline():
        rc, out, err = run("apply", "database")
        assert (rc, err) == (2, "error: /%s: %s\nerror: nothing applied\n" % (rel, why))
        assert fakeroot.snapshot(root) == before
        rc, out, err = run("list")
        assert rc == 0 and ("(broken: /%s: %s)" % (rel, why)) in out
        assert run("check", "--profile", "database", os.path.join(root, rel) + "=/" + rel)[0] == 2


def test_a_fifo_in_sysctl_d_or_tuned_does_not_hang(root, run):
    place(root, "etc/sysctl.d/99-x.conf", "fifo")
    fakeroot.enable_tuned(root, "x")
    place(root, "etc/tuned/x/tuned.conf", "fifo")
    with deadline():
        assert run("apply", "database")[0] == 0
        assert run("status")[0] in (0, 1)


def test_a_huge_file_is_refused_unread(root, run):
    write_bytes(root, ETC + "database.conf.d/50-big.conf", b"#" * (1 << 20) + b"\n")
    rc, out, err = run("show", "database")
    assert (rc, err) == (2, "error: /etc/mmtune/profiles/database.conf.d/50-big.conf: larger "
                            "than 1024 KiB: not a file mmtunectl reads\n")


SECRET = b"root:$6$s3cr3t-hash:19000:0:99999:7:::\n[client]\npassword = hunter2\nx\n"


def test_a_symlink_to_a_foreign_file_is_not_echoed(root, run, tmp_path):
    foreign = tmp_path / "shadow"
    foreign.write_bytes(SECRET)
    place(root, ETC + "database.conf.d/50-x.conf", "symlink", str(foreign))
    place(root, "etc/mmtune/profile", "symlink", str(foreign))
    for args in (["apply", "database"], ["check", "--profile", "database",
                                        os.path.join(root, ETC, "database.conf.d/50-x.conf")],
                 ["apply", "--auto"], ["status", "--json"]):
        rc, out, err = run(*args)
        assert rc == 2, args
        assert "s3cr3t" not in out + err and "hunter2" not in out + err, args
    rc, out, err = run("apply", "database")
    assert err.splitlines()[0] == ("error: /etc/mmtune/profiles/database.conf.d/50-x.conf:1: "
                                   "neither 'key = value' nor a [section] header")
    assert json.loads(run("status", "--json")[1])["errors"] == [
        "/etc/mmtune/profile:1: not a profile name (letters, digits, '_', '.', '-')"]
