"""systemd/dashboards/mmtune.json: every query of every panel names only
metrics mmtunectl writes (status --prometheus), for the union of both
kernel lines with every feature and the per-cgroup table in use."""

import json
import os
import re

import pytest

import fakeroot

DASHBOARD = os.path.join(fakeroot.SYSTEMD, "dashboards", "mmtune.json")
METRIC = re.compile(r"\bmmtune_[a-z0-9_]+")


def panels(doc):
    for p in doc["panels"]:
        yield p
        for q in p.get("panels", []):
            yield q


@pytest.fixture
def written(tmp_path, run):
    """Metric names status --prometheus writes on a 6.1 and a 6.12 host
    with every feature, cgroup entries and their counters."""
    names = set()
    for line in ("6.1", "6.12"):
        root = fakeroot.make(str(tmp_path / line), line=line)
        fakeroot.add_all_features(root, line)
        fakeroot.cgroup_policy(root, line=line)
        size = fakeroot.CG_SIZES[line][-1]
        fakeroot.write(root, "etc/mmtune/profile", "container-host\n")
        assert run("--root", root, "apply", "container-host")[0] == 0
        fakeroot.write(root, fakeroot.CG_POLICY + "/stats", "/kubepods.slice " + " ".join(
            "%s_%s=1" % (c, size) for c in ("fault_narrowed", "thp_whole", "thp_split",
                                            "zswap_stored", "zswap_refused")))
        text = run("--root", root, "status", "--prometheus")[1]
        names |= set(re.findall(r"^# TYPE (\S+) ", text, re.M))
    return names


def test_every_panel_query_names_a_metric_mmtunectl_writes(written):
    with open(DASHBOARD) as f:
        doc = json.load(f)
    queried = set()
    for p in panels(doc):
        if p["type"] == "row":
            continue
        exprs = [t["expr"] for t in p["targets"]]
        names = set(m for e in exprs for m in METRIC.findall(e))
        assert names, "panel %r queries no mmtune metric" % p["title"]
        assert names <= written, "panel %r: %s not written by mmtunectl" % (
            p["title"], ", ".join(sorted(names - written)))
        queried |= names
    rows = [p["title"] for p in doc["panels"] if p["type"] == "row"]
    assert "cgroup_policy" in rows
    # Every cgroup_policy family mmtunectl writes has a panel.
    assert set(n for n in written if n.startswith("mmtune_cgroup_policy_")) <= queried
    # The instance variable's query names a metric that is always written.
    var = [v for v in doc["templating"]["list"] if v["name"] == "instance"][0]
    assert set(METRIC.findall(var["definition"])) <= written
