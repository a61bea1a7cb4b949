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
PATCHES = os.path.join(fakeroot.REPO, "kernel-patches")
# The kernel lines: the directories of kernel-patches/ with a series.
LINES = sorted(d for d in os.listdir(PATCHES)
               if os.path.isfile(os.path.join(PATCHES, d, "series")))


def doc_blocks():
    """[(paths under mmtune/, mode RO|RW|WO|None, description in one line,
    [KernelVersion lines])]: one per entry; an entry may name several
    files, one "What:" line each, as the kernel's ABI files do."""
    out = []
    for f in sorted(glob.glob(os.path.join(DOCS, "sysfs-kernel-mm-mmtune*"))):
        text = open(f).read()
        for block in re.split(r"\n\s*\n(?=What:)", text):
            paths = re.findall(r"^What:\s*(\S+)", block, re.M)
            if not paths:
                continue
            desc = " ".join(block.split("Description:", 1)[-1].split())
            mode = re.search(r"\((RO|RW|WO)\)", desc)
            kv = re.search(r"^KernelVersion:\s*(.*)$", block, re.M)
            out.append(([p[len(MMTUNE):] for p in paths], mode.group(1) if mode else None, desc,
                        [v.strip() for v in kv.group(1).split(",")] if kv else []))
    return out


def doc_entries():
    """{path under mmtune/: (mode RO|RW|WO|None, description in one line)}."""
    return dict((p, (mode, desc)) for paths, mode, desc, _ in doc_blocks() for p in paths)


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
        # Per-size knobs may say "Default 1 up to 64kB, 0 above".
        m = re.search(r"Default (\d) up to (\d+)kB, (\d) above", desc)
        if m:
            size = int(re.search(r"_(\d+)kB$", row.file).group(1))
            assert row.default == (m.group(1) if size <= int(m.group(2)) else m.group(3)), desc
        else:
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
    root files of sysfs.c, then per MMTUNE_DEFINE_FEATURE(dir, ...) (or
    MMTUNE_DESC) "enabled", the knobs (MMTUNE_KNOB_ATTR) and other files of
    its attrs[] and its counters (STAT() entries of its counters[] table)."""
    out = {}
    for f in sorted(glob.glob(os.path.join(MODULE, "*.c"))):
        text = open(f).read()
        modes = dict((n, m.lower()) for m, n in re.findall(r"__ATTR_(RO|RW)\((\w+)\)", text))
        modes.update((n, "ro") for n in re.findall(r"MMTUNE_ATTR_RO\((\w+)\)", text))
        if os.path.basename(f) == "sysfs.c":
            body = re.search(r"mmtune_root_attrs\[\] = \{(.*?)\};", text, re.S).group(1)
            for n in re.findall(r"&(\w+)_attr\.", body):
                out[n] = modes[n]
            continue
        m = re.search(r"MMTUNE_(?:DEFINE_FEATURE|DESC)\((\w+),", text)
        if not m:
            continue
        d = m.group(1)
        out[d + "/enabled"] = "rw"
        body = re.search(r"static struct attribute \*%s_attrs\[\] = \{(.*?)\};" % d,
                         text, re.S).group(1)
        for n in re.findall(r"MMTUNE_KNOB_ATTR\((\w+)\)", body):
            out[d + "/" + n] = "rw"
        for n in re.findall(r"&(\w+)_attr\.|\bMMTUNE_ATTR\((\w+)\)", body):
            n = "".join(n)
            out[d + "/" + n] = modes[n]
        # Files that may be longer than a page: sysfs bin attributes.
        bins = dict((n, "rw") for n in re.findall(r"\bBIN_ATTR\((\w+), 0644,", text))
        bins.update((n, "ro") for n in re.findall(r"\bBIN_ATTR_RO\((\w+),", text))
        body = re.search(r"static struct bin_attribute \*%s_bin_attrs\[\] = \{(.*?)\};" % d,
                         text, re.S)
        for n in re.findall(r"&bin_attr_(\w+)", body.group(1) if body else ""):
            out[d + "/" + n] = bins[n]
        for n in re.findall(r"STAT\((\w+)\)", text):
            if n != "field":
                out[d + "/" + n] = "ro"
    return out


def test_table_matches_the_module_code():
    assert module_files() == dict((rel(r), r.mode) for r in schema.MM_FILES)


def test_lines_are_the_series():
    """The table's lines are kernel-patches/' lines, each with rows."""
    assert LINES == sorted(schema.read_line_rows()), (LINES, sorted(schema.read_line_rows()))
    assert "6.1" in LINES and "6.12" in LINES


@pytest.fixture(scope="module", params=LINES)
def hook_headers(request, tmp_path_factory):
    """(line, {name: text}) of include/linux/mmtune_hook*.h as a line's
    whole series leaves them: its hunks of those files applied in order."""
    if not shutil.which("git"):
        pytest.skip("no git to apply the series' header hunks")
    series = os.path.join(PATCHES, request.param)
    out = str(tmp_path_factory.mktemp("series"))
    with open(os.path.join(series, "series")) as f:
        patches = [l.split()[0] for l in f if l.strip() and not l.startswith("#")]
    for p in patches:
        subprocess.check_call(["git", "apply", "--include=include/linux/mmtune_hook*.h",
                               os.path.join(series, p)], cwd=out)
    d = os.path.join(out, "include", "linux")
    return request.param, dict((n, open(os.path.join(d, n)).read()) for n in os.listdir(d))


def test_abi_version_row_is_the_kernels(hook_headers):
    """A patch that bumps MMTUNE_ABI_VERSION bumps that line's abi_version
    row too (each line numbers its own ABI)."""
    line, headers = hook_headers
    m = re.search(r"^#define MMTUNE_ABI_VERSION\s+(\d+)$", headers["mmtune_hooks.h"], re.M)
    row = [r for r in schema.MM_FILES if (r.dir, r.file) == (".", "abi_version")][0]
    assert row.defaults.get(line) == m.group(1), "knobs.tsv abi_version on %s: %s, MMTUNE_ABI_VERSION %s" % (
        line, row.defaults.get(line), m.group(1))


def test_feature_dirs_are_the_kernel_groups_in_its_order(hook_headers):
    """Every line's hook table declares the same groups, in the order of the
    table's directories (the features file's order; fakeroot and the docs
    rely on it). A line has a group's directory exactly when its table has
    hook rows of that group: module/Kbuild builds the feature then, and the
    features file says not-offered otherwise."""
    line, headers = hook_headers
    defs = headers["mmtune_hook_defs.h"]
    features = re.findall(r"^MMTUNE_FEATURE\((\w+), (\w+),", defs, re.M)
    assert schema.MM_DIRS == [name for _, name in features]
    hooked = set(re.findall(r"^MMTUNE_HOOK(?:_VOID)?\((\w+),", defs, re.M))
    on_line = [d for d in schema.MM_DIRS if line in schema.DIR_LINES[d]]
    assert on_line == [name for ident, name in features if ident in hooked], line


def test_docs_name_the_lines_of_the_table():
    """Each entry's KernelVersion is the lines its files are on (the
    directory's: the lines of its files)."""
    lines = dict((rel(r), sorted(r.lines)) for r in schema.MM_FILES)
    for d in schema.MM_DIRS:
        lines[d + "/"] = sorted(schema.DIR_LINES[d])
    lines[""] = LINES
    for paths, _, _, kv in doc_blocks():
        for p in paths:
            assert sorted(kv) == lines[p], "%s: KernelVersion %s, table %s" % (p, kv, lines[p])


def test_schema_takes_every_mmtune_knob_and_counter_from_the_table():
    mm = [k for k in schema.KNOBS if k.section.startswith("mmtune.")]
    assert sorted(k.name for k in mm) == sorted(
        "mmtune.%s.%s" % (r.dir, r.file) for r in schema.MM_FILES if r.mode == "rw" and r.type != "table")
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
    for r in schema.MM_FILES:
        if r.type == "counter" and fakeroot.LINE in r.lines:
            assert "  mmtune.%s.%s " % (r.dir, r.file) in out


H = "\t".join(schema.COLUMNS) + "\n"


@pytest.mark.parametrize("text,error", [
    ("dir\tfile\n", ":1: header must be"),
    (H + "zswap\tx\tu32\trw\t1\t1-a\t\t6.1\n", ":2: values '1-a'"),
    (H + "zswap\tx\tfloat\trw\t1\t\t\t6.1\n", ":2: unknown type 'float'"),
    (H + "zswap\tx\tcounter\trw\t0\t\t\t6.1\n", ":2: a counter file is read-only"),
    (H + "zswap\tx\tu32\trw\t1\t0-9\t< y z\t6.1\n", ":2: constraint '< y z'"),
    (H + "zswap\tx\tu32\trw\t1\t0-9\t\n", ":2: 7 columns, expected 8"),
    (H + "zswap\tx\tu32\trw\t1\t0-9\t\t\n", ":2: lines ''"),
    (H + "zswap\tx\tu32\trw\t1\t0-9\t\t6.x\n", ":2: lines '6.x'"),
    # A file twice: only read-only, on other lines, differing in the default.
    (H + "z\tx\ttext\tro\t1\t\t\t6.1\nz\tx\ttext\tro\t2\t\t\t6.1 6.12\n", ":3: z/x listed twice"),
    (H + "z\tx\tu32\trw\t1\t0-9\t\t6.1\nz\tx\tu32\trw\t2\t0-9\t\t6.12\n", ":3: z/x listed twice"),
    (H + "z\tx\ttext\tro\t1\t\t\t6.1\nz\tx\tcounter\tro\t2\t\t\t6.12\n", ":3: z/x listed twice"),
])
def test_a_malformed_table_names_file_and_line(tmp_path, text, error):
    p = tmp_path / "knobs.tsv"
    p.write_text(text)
    with pytest.raises(schema.SchemaError) as e:
        schema.read_table(str(p))
    assert error in str(e.value)


def test_a_file_per_line_row_keeps_each_lines_default(tmp_path):
    p = tmp_path / "knobs.tsv"
    p.write_text(H + ".\tabi_version\ttext\tro\t10\t\t\t6.1\n.\tabi_version\ttext\tro\t1\t\t\t6.12\n")
    rows = schema.read_table(str(p))
    assert len(rows) == 1 and rows[0].lines == ["6.1", "6.12"]
    assert rows[0].defaults == {"6.1": "10", "6.12": "1"}
    assert schema.read_line_rows(str(p)) == {
        "6.1": [[".", "abi_version", "text", "ro", "10", "", ""]],
        "6.12": [[".", "abi_version", "text", "ro", "1", "", ""]]}


def test_a_knob_of_one_line_is_skipped_where_absent(root, run):
    """A 6.12 per-size knob in a profile, on a kernel without it (the fake
    root is 6.1): skipped like an absent feature, not an error."""
    fakeroot.add_all_features(root)
    fakeroot.write(root, "etc/mmtune/profiles/p.conf",
                   "[mmtune.thp_swap]\nenabled = 1\npolicy_64kB = split\n")
    rc, out, err = run("apply", "p")
    assert rc == 0, out + err
    assert "mmtune.thp_swap.policy_64kB" in out + err and "6.12" in out + err, out + err
