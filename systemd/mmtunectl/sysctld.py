"""The sysctl.d files: which vm sysctls they set at boot, and where.

systemd-sysctl (sysctl.d(5)) reads *.conf from /etc/sysctl.d, /run/sysctl.d,
/usr/local/lib/sysctl.d, /usr/lib/sysctl.d and /lib/sysctl.d; a file name
in an earlier directory hides the same name in a later one; the files are
read in name order and the last assignment wins. Debian's procps adds
/etc/sysctl.conf (as /etc/sysctl.d/99-sysctl.conf). mmtune.service runs
after systemd-sysctl.service, so the profile wins over these at boot; they
are reported so that the override is never silent.
"""

from . import schema

SYSTEMD_DIRS = ("etc/sysctl.d", "run/sysctl.d", "usr/local/lib/sysctl.d", "usr/lib/sysctl.d",
                "lib/sysctl.d")
# What tuned's reapply_sysctl writes again (tuned/plugins/plugin_sysctl.py):
# the first directory that has a name wins.
TUNED_DIRS = ("run/sysctl.d", "etc/sysctl.d")


def read(ctx, dirs=SYSTEMD_DIRS):
    """{knob name: (value, "file:line")} of the schema's sysctls."""
    chosen = {}
    for d in reversed(dirs):
        for f in ctx.listdir(d):
            if f.endswith(".conf"):
                chosen[f] = d + "/" + f
    files = [chosen[f] for f in sorted(chosen) if not ctx.is_masked(chosen[f])]
    files.append("etc/sysctl.conf")
    out = {}
    for rel in files:
        # Not ours: read tolerantly. A file that is not a regular one is
        # skipped, so is a line that is not UTF-8 (a Latin-1 comment).
        for n, line in enumerate((ctx.read_config(rel) or "").splitlines(), 1):
            line = line.strip()
            if not line or line[0] in "#;" or "=" not in line or "\ufffd" in line:
                continue
            key, value = [x.strip() for x in line.split("=", 1)]
            # "-key": failures ignored; "a/b" is "a.b" (sysctl.d(5))
            knob = "sysctl." + key.lstrip("-").replace("/", ".")
            if knob in schema.BY_NAME:
                out[knob] = (value, "%s:%d" % (ctx.show(rel), n))
    return out
