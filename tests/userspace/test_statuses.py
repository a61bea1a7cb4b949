"""Exit statuses as documented: a corrupt state file is an error (2), a
broken knobs.tsv a broken installation (7, one clear line, no traceback),
a closed pipe no error at all; check refuses values the module refuses
together; a profile's dirty_ratio = 0 is what the kernel holds afterwards."""

import io
import json
import os
import shutil
import subprocess
import sys

import pytest

import fakeroot

STATE = "run/mmtune/state.json"
VM = "proc/sys/vm/"


@pytest.mark.parametrize("text", [b"[]\n", b"\xff{\n", b'{"saved": {"sysctl.vm.swappiness": 5}}',
                                  b'{"saved": {}, "refused": 3}', b'{"saved": {}, "profile": []}'],
                         ids=["list", "latin1", "int", "refused", "profile"])
def test_a_corrupt_state_file_is_an_error(root, run, text, tmp_path):
    os.makedirs(os.path.join(root, "run/mmtune"), exist_ok=True)
    with open(os.path.join(root, STATE), "wb") as f:
        f.write(text)
    before = fakeroot.snapshot(root)
    for args in (["verify"], ["status"], ["status", "--json"], ["diff"], ["apply", "database"],
                 ["apply", "--dry-run"], ["rollback"], ["list"]):
        rc, out, err = run(*args)
        if args == ["list"]:
            assert (rc, err) == (0, ""), args
            continue
        assert rc == 2, (args, out, err)
        if args[-1] == "--json":
            err = "error: " + json.loads(out)["errors"][0]
        assert "error: /run/mmtune/state.json: unreadable state (" in err, args
        assert "Traceback" not in err
    assert fakeroot.snapshot(root) == before
    prom = str(tmp_path / "m.prom")
    assert run("status", "--prometheus", "--output", prom)[0] == 0
    assert "mmtune_health_status 2\n" in open(prom).read()


def package_copy(tmp_path, table):
    """mmtunectl's package as installed, with its own knobs.tsv next to it."""
    pkg = tmp_path / "python"
    shutil.copytree(os.path.join(fakeroot.SYSTEMD, "mmtunectl"), str(pkg / "mmtunectl"))
    if table is not None:
        (pkg / "mmtunectl" / "knobs.tsv").write_text(table)
    return str(pkg)


def mmtunectl(pkg, *args, **kw):
    return subprocess.run([sys.executable, "-m", "mmtunectl"] + list(args),
                          env=dict(os.environ, PYTHONPATH=pkg, PYTHONDONTWRITEBYTECODE="1"),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, **kw)


GOOD = open(fakeroot.TABLE).read()


@pytest.mark.parametrize("table,why", [
    (GOOD.replace("\t6.1 6.12\n", "\t6.1 6.12\textra\n", 1),
     "knobs.tsv:%d: 9 columns, expected 8" % (GOOD[:GOOD.index("\t6.1 6.12\n")].count("\n") + 1)),
    (GOOD.replace("thp_swap\tthreshold\tu32", "thp_swap\tthreshold\tu33"),
     "unknown type 'u33' (one of bool, u32, choice, counter, text, table)"),
    (None, "knobs.tsv not found next to "),
], ids=["columns", "type", "missing"])
def test_a_broken_table_is_a_broken_installation(root, tmp_path, table, why):
    pkg = package_copy(tmp_path, table)
    prom = str(tmp_path / "m.prom")
    for args in (["verify"], ["apply", "--auto"], ["knobs"],
                 ["status", "--prometheus", "--output", prom]):
        p = mmtunectl(pkg, "--root", root, *args)
        assert p.returncode == 7, (args, p.stderr)
        assert p.stderr.startswith("error: mmtunectl's table of mmtune.ko's files is broken: ")
        assert why in p.stderr
        assert p.stderr.endswith("; reinstall the mmtune package (exit 7)\n")
        assert len(p.stderr.splitlines()) == 1 and p.stdout == ""
    assert "mmtune_health_status 7\n" in open(prom).read()


@pytest.mark.parametrize("args,status", [(["knobs"], 0), (["status", "--json"], 1),
                                         (["status", "--prometheus"], 0), (["list"], 0)])
def test_a_closed_pipe_is_quiet(root, monkeypatch, args, status):
    """`mmtunectl knobs | head`: the reader is gone before the end. The
    command completes and exits with its own status; nothing is left for
    the interpreter's last flush to fail on (the BrokenPipeError noise and
    exit 120 it gave)."""
    r, w = os.pipe()
    os.close(r)
    stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(w, "w")))
    monkeypatch.setattr(sys, "stdout", stdout)
    from mmtunectl import cli
    rc = cli.main(["--root", root] + args, euid=0)
    stdout.flush()              # what the interpreter does at exit: no error
    stdout.close()
    assert rc == status


def test_a_closed_pipe_in_a_real_process(root):
    p = subprocess.Popen([sys.executable, "-m", "mmtunectl", "--root", root, "knobs"],
                         env=dict(os.environ, PYTHONPATH=fakeroot.SYSTEMD,
                                  PYTHONDONTWRITEBYTECODE="1"),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    assert (p.wait(), p.stderr.read()) == (0, b"")


@pytest.mark.parametrize("dropin,where", [
    ("[mmtune.thp_swap]\nthreshold = 64\n",
     "2: mmtune.thp_swap.threshold = 64 must be <= mmtune.thp_swap.sample_size = 32 "
     "(mmtune.thp_swap.sample_size: the module's default, the profile does not set it)"),
    ("[mmtune.thp_swap]\nsample_size = 2\n",
     "2: mmtune.thp_swap.threshold = 4 must be <= mmtune.thp_swap.sample_size = 2 "
     "(mmtune.thp_swap.threshold: the module's default, the profile does not set it)"),
    ("[mmtune.swap_slots]\ndeactivate_factor = 5\n",
     "2: mmtune.swap_slots.deactivate_factor = 5 must be < mmtune.swap_slots.activate_factor "
     "= 5 (mmtune.swap_slots.activate_factor: the module's default, the profile does not "
     "set it)"),
], ids=["threshold", "sample_size", "deactivate_factor"])
def test_check_refuses_a_knob_against_the_default_of_its_peer(root, run, tmp_path, dropin, where):
    f = tmp_path / "50-x.conf"
    f.write_text(dropin)
    rc, out, err = run("check", "--profile", "database", str(f))
    assert (rc, err) == (2, "error: %s:%s\n" % (f, where))
    # On its own the other knob may come from the profile: not an error.
    assert run("check", str(f))[0] == 0
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-x.conf", dropin)
    before = fakeroot.snapshot(root)
    assert run("apply", "database")[0] == 2
    assert fakeroot.snapshot(root) == before


def test_check_takes_the_peer_the_profile_sets(root, run, tmp_path):
    f = tmp_path / "50-x.conf"
    f.write_text("[mmtune.thp_swap]\nthreshold = 33\n")
    rc, out, err = run("check", "--profile", "web-latency", str(f))
    assert (rc, err) == (2, "error: %s:2: "
                            "mmtune.thp_swap.threshold = 33 must be <= "
                            "mmtune.thp_swap.sample_size = 32 "
                            "(/usr/lib/mmtune/profiles/web-latency.conf:32)\n" % f)
    f.write_text("[mmtune.thp_swap]\nthreshold = 32\n")
    assert run("check", "--profile", "web-latency", str(f))[0] == 0


@pytest.mark.parametrize("form", ["dirty_ratio", "dirty_background_ratio"])
def test_a_ratio_of_0_on_a_bytes_host(root, run, form):
    """The bytes form in use, the ratio file reads 0: writing 0 to it changes
    nothing in the kernel (dirty_ratio_handler() zeroes dirty_bytes only when
    the ratio changes), so apply writes another ratio first."""
    nbytes = form.replace("ratio", "bytes")
    fakeroot.write(root, VM + nbytes, "536870912")
    fakeroot.write(root, VM + form, "0")
    fakeroot.write(root, "etc/mmtune/profile", "database\n")
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-x.conf",
                   "[sysctl]\nvm.%s = 0\n" % form)
    rc, out, err = run("apply", "--auto")
    assert (rc, err) == (0, "")
    assert "set sysctl.vm.%s = 0 (was sysctl.vm.%s = 536870912)\n" % (form, nbytes) in out
    assert (fakeroot.read(root, VM + form), fakeroot.read(root, VM + nbytes)) == ("0", "0")
    rc, out, err = run("verify")
    assert rc == 0, out
    rc, out, err = run("rollback")
    assert rc == 0
    assert (fakeroot.read(root, VM + form), fakeroot.read(root, VM + nbytes)) == ("0", "536870912")
    # Ratio 0 in force, the bytes form applied and rolled back: ratio 0 again.
    fakeroot.write(root, VM + nbytes, "0")
    fakeroot.write(root, "etc/mmtune/profiles/database.conf.d/50-x.conf",
                   "[sysctl]\nvm.%s = 67108864\n" % nbytes)
    assert run("apply", "--auto")[0] == 0
    assert fakeroot.read(root, VM + nbytes) == "67108864"
    assert run("rollback")[0] == 0
    assert (fakeroot.read(root, VM + form), fakeroot.read(root, VM + nbytes)) == ("0", "0")
    rc, out, err = run("status", "--json")
    assert [k["state"] for k in json.loads(out)["knobs"] if k["name"] == "sysctl.vm." + form] \
        == ["unmanaged"]
