"""sysfs-docs/knobs.tsv, the one table of mmtune.ko's sysfs files, against
the ABI documents (both ways), the module's C code, and mmtunectl's schema:
a file added to the module without the table, or to the table without the
documents, fails here (issue 16, point 4)."""

import glob
import os
import re
import shutil
import subprocess

import pytest

import fakeroot
from mmtunectl import schema
from mmtunectl.context import Context
from mmtunectl.profile import ConfigError, Loader

DOCS = os.path.join(fakeroot.REPO, "sysfs-docs")
MODULE = os.path.join(fakeroot.REPO, "module")
MMTUNE = "/sys/kernel/mm/mmtune/"
SERIES = os.path.join(fakeroot.REPO, "kernel-patches", "6.1")


def doc_entries():
    """{path under mmtune/: (mode RO|RW|WO|None, description in one line)}."""
    out = {}
    for f in sorted(glob.glob(os.path.join(DOCS, "sysfs-kernel-mm-mmtune*"))):
        text = open(f).read()
        for block in re.split(r"^(?=What:)", text, flags=re.M):
            m = re.match(r"What:\s*(\S+)", block)
            if not m:
                continue
            desc = " ".join(block.split("Description:", 1)[-1].split())
            mode = re.search(r"\((RO|RW|WO)\)", desc)
            out[m.group(1)[len(MMTUNE):]] = (mode.group(1) if mode else None, desc)
    return out


def rel(row):
    return row.file if row.dir == "." else row.dir + "/" + row.file


def test_table_and_docs_list_the_same_files_with_the_same_modes():
    docs = dict((p, v) for p, v in doc_entries().items() if p and not p.endswith("/"))
    table = dict((rel(r), r.mode.upper()) for r in schema.MM_FILES)
    assert sorted(set(docs) - set(table)) == [], "documented, not in knobs.tsv"
    assert sorted(set(table) - set(docs)) == [], "in knobs.tsv, not documented"
    assert dict((p, v[0]) for p, v in docs.items()) == table


def test_every_feature_dir_is_documented_and_counters_start_at_zero():
    docs = doc_entries()
    for d in schema.MM_DIRS:
        assert d + "/" in docs, "no What: entry for the directory %s/" % d
        if schema.COUNTERS[d]:
            assert "start at 0" in docs[d + "/"][1], d


def doc_ranges(desc):
    """[(lo, hi)] of "A to B" / "N or A to B" / "A (word) to B", the first one."""
    m = re.search(r"(?:(\d+) or )?(\d+)(?: \([a-z ]+\))? to (\d+)", desc)
    if not m:
        return None
    out = [(int(m.group(1)), int(m.group(1)))] if m.group(1) else []
    return out + [(int(m.group(2)), int(m.group(3)))]


@pytest.mark.parametrize("row", [r for r in schema.MM_FILES if r.mode == "rw"],
                         ids=lambda r: rel(r))
def test_defaults_and_ranges_agree_with_the_docs(row):
    mode, desc = doc_entries()[rel(row)]
    if row.type == "u32":
        assert doc_ranges(desc) == row.ranges, desc
        m = re.search(r"[Dd]efault:?\s+(\d+)", desc)
        assert m, "the doc states no default: " + desc
        assert m.group(1) == row.default
    elif row.type == "bool":
        assert '"0" or "1"' in desc, desc
        m = re.search(r"Default (\d)", desc)
        assert m and m.group(1) == row.default, desc
    elif row.type == "choice":
        quoted = re.findall(r'"([a-z][a-z-]*)"', desc)
        assert sorted(set(quoted)) == sorted(row.choices), desc
        m = re.search(r'"([a-z-]+)" \(default\)', desc)
        assert m and m.group(1) == row.default, desc
    if row.relation:
        assert row.relation[1] in desc, "the doc does not mention the constraint: " + desc


def module_files():
    """{rel path: rw|ro} from the feature descriptors of module/*.c: the
    root files of sysfs.c, then per MMTUNE_DESC(dir, ...) "enabled", the
    knobs (MMTUNE_KNOB_*), the other files of its attrs[] and its counters
    (STAT() entries of its counters[] table)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(MODULE, "*.c"))):
        text = open(f).read()
        modes = dict((n, m.lower()) for m, n in re.findall(r"__ATTR_(RO|RW)\((\w+)\)", text))
        if os.path.basename(f) == "sysfs.c":
            body = re.search(r"mmtune_root_attrs\[\] = \{(.*?)\};", text, re.S).group(1)
            for n in re.findall(r"&(\w+)_attr\.", body):
                out[n] = modes[n]
            continue
        m = re.search(r"MMTUNE_DESC\((\w+),", text)
        if not m:
            continue
        d = m.group(1)
        out[d + "/enabled"] = "rw"
        for n in re.findall(r"MMTUNE_KNOB_(?:U32|BOOL|CHOICE)\((\w+),", text):
            out[d + "/" + n] = "rw"
        body = re.search(r"static struct attribute \*%s_attrs\[\] = \{(.*?)\};" % d,
                         text, re.S).group(1)
        for n in re.findall(r"&(\w+)_attr\.", body):
            out[d + "/" + n] = modes[n]
        for n in re.findall(r"STAT\((\w+)\)", text):
            if n != "field":
                out[d + "/" + n] = "ro"
    return out


def test_table_matches_the_module_code():
    assert module_files() == dict((rel(r), r.mode) for r in schema.MM_FILES)


@pytest.fixture(scope="module")
def hook_headers(tmp_path_factory):
    """{name: text} of include/linux/mmtune_hook*.h as the whole series
    leaves them: its hunks of those files applied in series order."""
    if not shutil.which("git"):
        pytest.skip("no git to apply the series' header hunks")
    out = str(tmp_path_factory.mktemp("series"))
    with open(os.path.join(SERIES, "series")) as f:
        patches = [l.split()[0] for l in f if l.strip() and not l.startswith("#")]
    for p in patches:
        subprocess.check_call(["git", "apply", "--include=include/linux/mmtune_hook*.h",
                               os.path.join(SERIES, p)], cwd=out)
    d = os.path.join(out, "include", "linux")
    return dict((n, open(os.path.join(d, n)).read()) for n in os.listdir(d))


def test_abi_version_row_is_the_kernels(hook_headers):
    """A patch that bumps MMTUNE_ABI_VERSION bumps the abi_version row too."""
    m = re.search(r"^#define MMTUNE_ABI_VERSION\s+(\d+)$", hook_headers["mmtune_hooks.h"], re.M)
    row = [r for r in schema.MM_FILES if (r.dir, r.file) == (".", "abi_version")][0]
    assert row.default == m.group(1), "knobs.tsv abi_version %s, MMTUNE_ABI_VERSION %s" % (
        row.default, m.group(1))


def test_feature_dirs_are_the_kernel_groups_in_its_order(hook_headers):
    """The features file lists the groups in the kernel's order; the table's
    directories come in the same order (fakeroot and the docs rely on it)."""
    groups = re.findall(r"^MMTUNE_FEATURE\(\w+, (\w+),", hook_headers["mmtune_hook_defs.h"], re.M)
    assert schema.MM_DIRS == groups


def test_schema_takes_every_mmtune_knob_and_counter_from_the_table():
    mm = [k for k in schema.KNOBS if k.section.startswith("mmtune.")]
    assert sorted(k.name for k in mm) == sorted(
        "mmtune.%s.%s" % (r.dir, r.file) for r in schema.MM_FILES if r.mode == "rw")
    for k in mm:
        row = [r for r in schema.MM_FILES if "mmtune.%s.%s" % (r.dir, r.file) == k.name][0]
        assert (k.ranges, k.choices, k.default) == (row.ranges, row.choices, row.default)
    # Within a feature, the switches come last: choice files, then enabled.
    for d in schema.MM_DIRS:
        keys = [k.key for k in mm if k.section == "mmtune." + d]
        if "enabled" in keys:
            assert keys[-1] == "enabled", keys
    assert sum(len(v) for v in schema.COUNTERS.values()) == len(
        [r for r in schema.MM_FILES if r.type == "counter"])


def test_no_hand_written_mmtune_names_in_mmtunectl():
    """The names of mmtune's files appear only in knobs.tsv: a quoted file
    name of a feature directory in mmtunectl's code would be a second list."""
    names = set(r.file for r in schema.MM_FILES if r.dir != ".") - {"enabled", "mode"}
    pkg = os.path.join(fakeroot.SYSTEMD, "mmtunectl")
    for f in glob.glob(os.path.join(pkg, "*.py")):
        quoted = set(re.findall(r'"([a-z_]+)"', open(f).read()))
        assert not (quoted & names), "%s lists mmtune files by hand: %s" % (f, quoted & names)


def test_pcp_observe_and_high_min_fraction_can_be_set(root):
    fakeroot.write(root, "etc/mmtune/profiles/p.conf",
                   "[mmtune.pcp_high]\nobserve = 1\nhigh_max_fraction = 16\nhigh_min_fraction = 100\n")
    prof = Loader(Context(root=root)).load("p")
    assert prof.settings["mmtune.pcp_high.observe"].value == "1"
    assert prof.settings["mmtune.pcp_high.high_min_fraction"].value == "100"
    # The kernel's rule: high_min_fraction 0, or >= high_max_fraction.
    fakeroot.write(root, "etc/mmtune/profiles/bad.conf",
                   "[mmtune.pcp_high]\nhigh_max_fraction = 64\nhigh_min_fraction = 16\n"
                   "[mmtune.swap_slots]\nhigh_min_fraction = 0\n")
    with pytest.raises(ConfigError) as e:
        Loader(Context(root=root)).load("bad")
    assert e.value.errors == [
        "/etc/mmtune/profiles/bad.conf:5: unknown key 'high_min_fraction' in [mmtune.swap_slots]",
        "/etc/mmtune/profiles/bad.conf:3: mmtune.pcp_high.high_min_fraction = 16 must be >= "
        "mmtune.pcp_high.high_max_fraction = 64 or be 0 (/etc/mmtune/profiles/bad.conf:2)"]
    fakeroot.write(root, "etc/mmtune/profiles/zero.conf",
                   "[mmtune.pcp_high]\nhigh_max_fraction = 64\nhigh_min_fraction = 0\n")
    Loader(Context(root=root)).load("zero")
    fakeroot.write(root, "etc/mmtune/profiles/five.conf", "[mmtune.pcp_high]\nhigh_min_fraction = 5\n")
    with pytest.raises(ConfigError) as e:
        Loader(Context(root=root)).load("five")
    assert "5 is out of range (0, 8..10000)" in e.value.errors[0]


def test_status_shows_pcp_counters(root, run):
    fakeroot.add_all_features(root)
    fakeroot.write(root, "sys/kernel/mm/mmtune/pcp_high/refill_calls", "41")
    rc, out, err = run("status")
    assert re.search(r"^  mmtune\.pcp_high\.refill_calls +41$", out, re.M), out
    for d, names in schema.COUNTERS.items():
        for n in names:
            assert "  mmtune.%s.%s " % (d, n) in out


@pytest.mark.parametrize("text,error", [
    ("dir\tfile\n", ":1: header must be"),
    ("\t".join(schema.COLUMNS) + "\nzswap\tx\tu32\trw\t1\t1-a\t\n", ":2: values '1-a'"),
    ("\t".join(schema.COLUMNS) + "\nzswap\tx\tfloat\trw\t1\t\t\n", ":2: unknown type 'float'"),
    ("\t".join(schema.COLUMNS) + "\nzswap\tx\tcounter\trw\t0\t\t\n", ":2: a counter file is read-only"),
    ("\t".join(schema.COLUMNS) + "\nzswap\tx\tu32\trw\t1\t0-9\t< y z\n", ":2: constraint '< y z'"),
    ("\t".join(schema.COLUMNS) + "\nzswap\tx\tu32\trw\t1\t0-9\n", ":2: 6 columns, expected 7"),
])
def test_a_malformed_table_names_file_and_line(tmp_path, text, error):
    p = tmp_path / "knobs.tsv"
    p.write_text(text)
    with pytest.raises(schema.SchemaError) as e:
        schema.read_table(str(p))
    assert error in str(e.value)
