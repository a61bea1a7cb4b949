"""The operator's documents: mmtunectl(8) covers every command, option,
exit status and environment variable mmtunectl has, mmtune.conf(5) every
profile section; the README opens with the quick start and stays short;
groff finds no problem in either page."""

import glob
import os
import re
import subprocess

import pytest

import fakeroot
from mmtunectl import cli

MAN = os.path.join(fakeroot.REPO, "packaging", "man", "mmtunectl.8")
CONF = os.path.join(fakeroot.REPO, "packaging", "man", "mmtune.conf.5")
README = os.path.join(fakeroot.SYSTEMD, "README.md")


def man_text():
    return open(MAN).read()


def section(text, name):
    return re.search(r"^\.SH %s\n(.*?)(?=^\.SH )" % re.escape(name), text, re.S | re.M).group(1)


def subparsers():
    p = cli.parser()
    action = [a for a in p._actions if a.__class__.__name__ == "_SubParsersAction"][0]
    return action.choices


def test_man_page_has_every_command_and_option():
    commands = section(man_text(), "COMMANDS")
    for name, sub in subparsers().items():
        assert re.search(r"^\.(?:B|BR|BI) %s\b" % name, commands, re.M), "no entry for " + name
        for a in sub._actions:
            for opt in a.option_strings:
                if opt.startswith("--") and opt != "--help":
                    assert opt.replace("-", "\\-") in commands, "%s %s" % (name, opt)
    options = section(man_text(), "OPTIONS")
    for a in cli.parser()._actions:
        for opt in a.option_strings:
            if opt.startswith("--"):
                assert opt.replace("-", "\\-") in options, opt


def test_man_page_has_every_exit_status():
    codes = sorted(set(v for k, v in vars(cli).items() if k.startswith("EXIT_")))
    assert codes == [0, 1, 2, 3, 4, 5, 6, 7]
    listed = re.findall(r"^\.TP\n\.B (\d+)\n", section(man_text(), "EXIT STATUS"), re.M)
    assert [int(c) for c in listed] == codes
    readme = open(README).read()
    for c in codes:
        assert "\n| %d | " % c in readme, "README exit status table lacks %d" % c


def test_man_page_has_every_environment_variable():
    used = set()
    for f in glob.glob(os.path.join(fakeroot.SYSTEMD, "mmtunectl", "*.py")):
        used |= set(re.findall(r"os\.environ(?:\.get)?[\[(]\"([A-Z_]+)\"", open(f).read()))
    assert used == {"JOURNAL_STREAM", "SUDO_UID"}
    env = section(man_text(), "ENVIRONMENT")
    for v in used | {"MMTUNE_ROOT", "MMTUNE_DETECT_VIRT"}:
        assert ".B %s\n" % v in env, v


@pytest.mark.skipif(not os.path.exists("/usr/bin/groff"), reason="no groff")
@pytest.mark.parametrize("page", [MAN, CONF])
def test_man_pages_render_without_warnings(page):
    p = subprocess.run(["groff", "-man", "-ww", "-z", page], stderr=subprocess.PIPE,
                       universal_newlines=True, env=dict(os.environ, LC_ALL="C"))
    assert (p.returncode, p.stderr) == (0, "")


def test_profile_format_page_has_every_section():
    """mmtune.conf(5) names every section a profile may have (the per-size
    ones by their pattern) and the check exit statuses mmtunectl has."""
    from mmtunectl import schema
    text = open(CONF).read().replace("\\-", "-")
    for sec in schema.SECTIONS:
        sec = re.sub(r"^mmtune\..*", "mmtune.", re.sub(r"-[0-9]+kB$", "-", sec))
        assert "[" + sec in text, sec
    listed = re.findall(r"^\.TP\n\.B (\d+)\n", section(text, "CHECKING"), re.M)
    assert listed == ["0", "2", "7"]
    assert "mmtune.conf (5)" in man_text()


def test_readme_is_short_and_names_the_man_pages():
    text = open(README).read()
    assert len(text.splitlines()) <= 250
    assert "`mmtune.conf(5)`" in text and "`mmtunectl(8)`" in text
    assert not re.search(r"\bissue [0-9]", text)


def test_readme_opens_with_the_operator_quick_start():
    headings = re.findall(r"^## (.*)$", open(README).read(), re.M)
    assert headings[0] == "Quick start (operators)"
    quick = open(README).read().split("## Quick start (operators)")[1].split("\n## ")[0]
    for what in ("apt install", "mmtunectl status", "mmtunectl verify", "journalctl -t mmtunectl",
                 "systemd.mask=mmtune.service", "module_blacklist=mmtune",
                 "systemctl disable --now mmtune.service"):
        assert what in quick, what
