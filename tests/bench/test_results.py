# SPDX-License-Identifier: GPL-2.0
"""The measured-results chain: writers -> results/*.tsv -> the docs' regions.

    python3 -m pytest tests/bench/test_results.py

Each test but the first works in a copy of the writers and the renderer in
a temporary git repository, on fake measurements (no kernel, no VM).
"""
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
RENDER = ("scripts/render-results.py",)


def run(cwd, *cmd, stdin=None, env=None):
    return subprocess.run([sys.executable, *cmd] if cmd[0].endswith(".py") else list(cmd),
                          cwd=cwd, input=stdin, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, check=False)


def test_repository_docs_are_rendered_from_results():
    """Every region of this repository's docs is its result file's rendering,
    and every result file has its command, date, commit and machine."""
    r = run(REPO, *RENDER, "--check")
    assert r.returncode == 0, r.stdout + r.stderr
    with open(os.path.join(REPO, "tests", "bench", "README.md")) as f:
        regions = re.findall(r"^<!-- results:(\S+) -->$", f.read(), re.M)
    assert "icount-6.12" in regions and "bench-zswap-large-6.1" in regions


@pytest.fixture
def repo(tmp_path):
    """A git repository with the writers, the renderer and one doc."""
    for rel in ("tests/bench/results.py", "tests/bench/check-times.py", "tests/bench/lib-bench.sh",
                "tests/bench/icount/features.py", "tests/bench/icount/report.py",
                "scripts/render-results.py"):
        os.makedirs(tmp_path / os.path.dirname(rel), exist_ok=True)
        shutil.copy(os.path.join(REPO, rel), tmp_path / rel)
    (tmp_path / "doc.md").write_text("# Doc\n\nBefore.\n\n<!-- results:t -->\nstale\n<!-- /results:t -->\n\nAfter.\n")
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "t"]):
        subprocess.run(cmd, cwd=tmp_path, check=True)
    return tmp_path


def write_t(repo, table="config\tMB/s\nstock\t229.2\nmmtune\t79.8\n"):
    return run(repo, "tests/bench/results.py", "write", "t", "--command", "tests/bench/run.sh t",
               "--kernel", "test kernel 6.1.0", "--start-load", "1.00 2.00 3.00", stdin=table)


def test_write_adds_the_fields_and_render_puts_the_table_in_the_region(repo):
    assert write_t(repo).returncode == 0
    text = (repo / "results" / "t.tsv").read_text()
    head = git_head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=repo,
                                     capture_output=True, text=True).stdout.strip()
    assert f"# commit: {head}\n" in text
    assert re.search(r"^# date: 20\d\d-\d\d-\d\d \d\d:\d\dZ$", text, re.M)
    assert re.search(rf"^# machine: .*, {os.cpu_count()} CPUs, load average 1.00 2.00 3.00 -> [\d.]+ [\d.]+ [\d.]+$", text, re.M)
    assert text.endswith("config\tMB/s\nstock\t229.2\nmmtune\t79.8\n")
    # A stale region: --check fails with a diff and writes nothing.
    r = run(repo, *RENDER, "--check")
    assert r.returncode == 1 and "+| mmtune | 79.8 |" in r.stdout and "-stale" in r.stdout
    assert "stale" in (repo / "doc.md").read_text()
    r = run(repo, *RENDER)
    assert r.returncode == 0, r.stderr
    doc = (repo / "doc.md").read_text()
    assert (f"<!-- results:t -->\n| config | MB/s |\n|---|---|\n| stock | 229.2 |\n| mmtune | 79.8 |\n\n"
            f"From `tests/bench/run.sh t` at commit {git_head}, ") in doc
    assert "; kernel: test kernel 6.1.0. (`results/t.tsv`)\n<!-- /results:t -->\n\nAfter.\n" in doc
    assert "stale" not in doc and doc.startswith("# Doc\n\nBefore.\n")
    assert run(repo, *RENDER, "--check").returncode == 0
    # A new measurement makes the rendered region stale again; changed
    # results and docs do not make the tree dirty, changed code does.
    assert write_t(repo, "config\tMB/s\nstock\t230.0\n").returncode == 0
    assert f"# commit: {git_head}\n" in (repo / "results" / "t.tsv").read_text()
    (repo / "tests" / "bench" / "lib-bench.sh").write_text("changed\n")
    write_t(repo, "config\tMB/s\nstock\t230.0\n")
    assert f"# commit: {git_head}-dirty\n" in (repo / "results" / "t.tsv").read_text()
    r = run(repo, *RENDER, "--check")
    assert r.returncode == 1 and "-| stock | 229.2 |" in r.stdout and "+| stock | 230.0 |" in r.stdout


def test_bad_input_is_refused_and_changes_nothing(repo):
    r = write_t(repo, "config\tMB/s\nstock\t229.2\textra\n")
    assert r.returncode == 1 and "t: stdin:2: 3 columns, the header has 2" in r.stderr
    assert not (repo / "results").exists() or os.listdir(repo / "results") == []
    assert write_t(repo).returncode == 0
    path = repo / "results" / "t.tsv"
    path.write_text(re.sub(r"^# machine: .*\n", "", path.read_text(), flags=re.M))
    for args in (("--check",), ()):
        r = run(repo, *RENDER, *args)
        assert r.returncode == 1 and "results/t.tsv: no machine field" in r.stderr
    assert "stale" in (repo / "doc.md").read_text()
    (repo / "doc.md").write_text("x\n\n<!-- results:nothing -->\n<!-- /results:nothing -->\n")
    write_t(repo)
    r = run(repo, *RENDER)
    assert r.returncode == 1 and "doc.md:3:" in r.stderr and "nothing.tsv" in r.stderr


def test_bench_rows_go_from_the_report_to_the_result_file(repo, tmp_path):
    r = subprocess.run(["bash", "-c", '. tests/bench/lib-bench.sh; printf "a 1.5\\n" | '
                        'awk "$BENCH_AWK"\'{ print "== results"; row("config\\tMB/s"); row($1 "\\t" $2) }\''],
                       cwd=repo, capture_output=True, text=True, check=True)
    lines = r.stdout.splitlines()
    assert lines[1] == "result:\tconfig\tMB/s" and lines[3] == "result:\ta\t1.5"
    assert lines[2].split() == ["config", "MB/s"] and lines[4].split() == ["a", "1.5"]
    report = tmp_path / "report.txt"
    # As the VM runner prints the guest's output: TAP diagnostics.
    report.write_text("boot\n" + "".join("# " + x + "\n" for x in lines) + "ok 1 bench-a\n")
    r = run(repo, "tests/bench/results.py", "write", "bench-a-6.1", "--command", "tests/bench/run.sh a",
            "--from-report", str(report))
    assert r.returncode == 0, r.stderr
    assert (repo / "results" / "bench-a-6.1.tsv").read_text().endswith("\nconfig\tMB/s\na\t1.5\n")
    report.write_text("boot, no table\n")
    r = run(repo, "tests/bench/results.py", "write", "bench-b-6.1", "--command", "x", "--from-report", str(report))
    assert r.returncode == 1 and f"bench-b-6.1: {report}: no table" in r.stderr


def fake_icount(root, s, c, ops, phases, rounds):
    """run.sh's report directory SET-CONFIG: rounds = {phase id: [(kernel, {func: insns})]}."""
    d = root / f"{s}-{c}"
    os.makedirs(d / "work")
    (d / "report.txt").write_text(f"{ops} ops per round\n")
    (d / "work" / "phases.txt").write_text("".join(f"{i} {n} one {n}\n" for i, n in phases))
    out, seq = [], 0
    for pid, rs in rounds.items():
        for kernel, funcs in rs:
            seq += 1
            out.append(f"mark seq={seq} id={pid} vcpu=0 kernel={kernel} user=0 rep_kernel=0 rep_user=0")
            out += [f"func name={f} insns={n}" for f, n in funcs.items()]
    (d / "run-1.txt").write_text("\n".join(out) + "\n")
    return str(d)


def test_features_tables_carry_the_counts_and_goals(repo, tmp_path):
    data = tmp_path / "icount"
    dirs = []
    # mem: kernel instructions per op 1000 (unpatched), 1000.5, 1004 (off: goal +0.3% missed), 990 (on).
    for c, k in (("unpatched", 1000), ("unloaded", 1000.5), ("off", 1004), ("on", 990)):
        dirs.append(fake_icount(data, "mem", c, 100, [(1, "fault4k")], {1: [(int(k * 100), {})] * 2}))
    # zswap pageout: LZ4_* moves, the rest +0.05%.
    for c, k, lz in (("unpatched", 40000, 30000), ("unloaded", 40100, 30095)):
        dirs.append(fake_icount(data, "zswap", c, 10, [(1, "pageout")],
                                {1: [(k * 10, {"LZ4_compress_fast": lz * 10})]}))
    out = tmp_path / "tables"
    r = run(repo, "tests/bench/icount/features.py", "--tables", str(out), *dirs)
    assert r.returncode == 0, r.stderr
    assert (out / "ops.tsv").read_text() == (
        "set / op\tunpatched\tunloaded\toff\ton\tunloaded vs unpatched\toff vs unpatched\ton vs off\n"
        "mem / fault4k\t1000.0\t1000.5\t1004.0\t990.0\t+0.050%\t+0.400%\t-1.39%\n"
        "zswap / pageout\t40000.0\t40100.0\t-\t-\t+0.050% without LZ4_*, +0.250% with\t-\t-\n")
    goals = (out / "goals.tsv").read_text().splitlines()
    assert goals[0] == "goal\tmeasured\tmet"
    assert "hooks unloaded vs unpatched, mem/fault4k\t+0.050% (goal <= +0.1%)\tmet" in goals
    assert "hooks off vs unpatched, mem/fault4k\t+0.400% (goal <= +0.3%)\tnot met" in goals
    assert "pcp_high on vs off, fault4k\t-1.39% (goal <= +1%)\tmet" in goals
    assert ("hooks unloaded vs unpatched, zswap/pageout\t"
            "+0.050% without LZ4_*, +0.250% with (goal <= +0.1%)\tmet") in goals
    # The tables are result files as they are.
    for t in ("ops", "goals"):
        with open(out / f"{t}.tsv") as f:
            r = run(repo, "tests/bench/results.py", "write", f"icount-{t}", "--command", "x",
                    stdin=f.read())
        assert r.returncode == 0, r.stderr


def test_check_times_from_the_suite_logs(repo, tmp_path):
    logs = tmp_path / "test-logs"
    logs.mkdir()
    now = time.time()
    for i, (name, text) in enumerate((("unit", "ok 1\n=== unit: took 5s\n"),
                                      ("vm", "ok 1\n=== vm: took 612s\n"),
                                      ("vm-6.12", "=== vm-6.12: took 329s\n"))):
        (logs / f"{name}.log").write_text(text)
        os.utime(logs / f"{name}.log", (now + i, now + i))
    (logs / "static.log").write_text("ok 1 no timing here\n")
    (logs / "old.log").write_text("=== old: took 9s\n")
    os.utime(logs / "old.log", (now - 3600, now - 3600))
    start = int(now) - 700
    r = run(repo, "tests/bench/check-times.py", "--start", str(start), "--start-load", "4.00 3.00 2.00",
            "--summary", "800 passed, 0 failed, 3 skipped", str(logs),
            env={"MMTUNE_CHECK_T0": str(start - 120)})
    assert r.returncode == 0, r.stderr
    text = (repo / "results" / "check-times.tsv").read_text()
    assert "# command: tests/run-all.sh (make check)\n" in text
    assert "# note: tests: 800 passed, 0 failed, 3 skipped.\n" in text
    assert "load average 4.00 3.00 2.00 -> " in text
    table = text[text.index("step\t"):].splitlines()
    assert table[:5] == ["step\tseconds", "building what was missing\t120", "suite unit\t5",
                         "suite vm\t612", "suite vm-6.12\t329"]
    assert re.fullmatch(r"all suites\t(\d+)", table[5]) and 700 <= int(table[5].split("\t")[1]) < 800
    empty = tmp_path / "empty"
    empty.mkdir()
    r = run(repo, "tests/bench/check-times.py", "--start", "0", "--start-load", "0 0 0", "--summary", "x", str(empty))
    assert r.returncode == 1 and "no '=== NAME: took Ns' line" in r.stderr


def test_time_keeps_each_commands_latest_successful_run(repo):
    def time_(*args):
        return run(repo, "tests/bench/results.py", "time", "build-times", *args)

    assert time_("--label", "make packages", "--", "sleep", "2").returncode == 0
    assert time_("--", "sleep", "1").returncode == 0
    assert time_("--label", "make packages", "--", "true").returncode == 0
    r = time_("--label", "make packages", "--", "sh", "-c", "exit 3")
    assert r.returncode == 3 and "make packages not recorded, it exited 3" in r.stderr
    text = (repo / "results" / "build-times.tsv").read_text()
    table = [line.split("\t") for line in text[text.index("command\t"):].splitlines()]
    assert table[0] == ["command", "seconds", "load average", "date", "commit"]
    assert [(r[0], r[1]) for r in table[1:]] == [("sleep 1", "1"), ("make packages", "0")]
    assert re.fullmatch(r"[\d.]+ [\d.]+ [\d.]+ -> [\d.]+ [\d.]+ [\d.]+", table[2][2])
    (repo / "doc.md").write_text("<!-- results:build-times -->\n<!-- /results:build-times -->\n")
    assert run(repo, *RENDER).returncode == 0
    doc = (repo / "doc.md").read_text()
    assert "\n| make packages | 0 | " in doc
    # The date cells as the caption's: the docs carry no ISO dates.
    assert not re.search(r"20\d\d-\d\d-\d\d", doc), doc
