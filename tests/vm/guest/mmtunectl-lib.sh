# Helpers for the mmtunectl guest tests (tests/7x-*.sh), sourced after /lib.sh.
MMTUNECTL=/usr/sbin/mmtunectl
PROFILES="balanced database web-latency batch-throughput virtualization-host container-host"
# The one table of mmtune.ko's files, as installed with mmtunectl.
KNOBS_TSV=/usr/lib/mmtune/python/mmtunectl/knobs.tsv
MMTUNE_GROUPS=$(awk -F'\t' 'NR > 1 && !/^#/ && $1 != "." && !seen[$1]++ { print $1 }' "$KNOBS_TSV")

# ctl ARGS...: run mmtunectl, show the command and its output; sets $out, $rc.
ctl() {
	out=$("$MMTUNECTL" "$@" 2>&1)
	rc=$?
	echo "\$ mmtunectl $*"
	[ -n "$out" ] && echo "$out"
	echo "(exit $rc)"
}

# ctl_rc WANT ARGS...: ctl, and fail unless it exits WANT.
ctl_rc() {
	want=$1; shift
	ctl "$@"
	[ "$rc" = "$want" ] || fail "mmtunectl $*: exit $rc, expected $want"
}

# out_has TEXT: the last output has a line starting with TEXT.
out_has() {
	echo "$out" | grep -qF -- "$1" || fail "output lacks '$1'"
}

# knob_snapshot FILE: every writable mm knob and its value, one per line;
# on 6.12 the per-size (mTHP) switches too, hugepages-<size>kB/enabled and
# shmem_enabled (a glob matching none is skipped: 6.1).
knob_snapshot() {
	for f in /proc/sys/vm/* /sys/kernel/mm/transparent_hugepage/* \
		/sys/kernel/mm/transparent_hugepage/khugepaged/* \
		/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled \
		/sys/kernel/mm/transparent_hugepage/hugepages-*kB/shmem_enabled \
		/sys/module/zswap/parameters/* /sys/kernel/mm/mmtune/*/*; do
		[ -f "$f" ] || continue
		case "$(stat -c %a "$f")" in 6??) ;; *) continue ;; esac
		echo "$f=$(tr '\n' ' ' <"$f" 2>/dev/null)"
	done >"$1"
}

# same_snapshot A B WHAT: fail with the difference when they differ.
same_snapshot() {
	diff "$1" "$2" || fail "$3"
	info "ok: $3 ($(wc -l <"$1") knobs compared)"
}

# Read every value the active profile wants straight from the files
# (not through mmtunectl's own reader) and compare. A knob of another
# kernel line only (its kernel_lines lack the running one) is not checked.
readback_check() {
	"$MMTUNECTL" status --json | python3 -c '
import json, re, sys
doc = json.load(sys.stdin)
line = sys.argv[1]
bad = 0
for k in doc["knobs"]:
    w = k["wanted"]
    if w is None:
        continue
    if "kernel_lines" in k and line not in k["kernel_lines"]:
        print("other line %s (only on %s), skipped" % (k["name"], " ".join(k["kernel_lines"])))
        continue
    try:
        raw = open(k["path"]).read().strip()
    except FileNotFoundError:
        print("absent %s (%s)" % (k["name"], "optional, skipped" if k["optional"] else "REQUIRED"))
        bad += not k["optional"]
        continue
    m = re.search(r"\[(.*?)\]", raw)
    live = m.group(1) if m else raw
    if w[:2] == ">=":
        ok = int(live) >= int(w[2:])
    elif w[:2] == "<=":
        ok = int(live) <= int(w[2:])
    else:
        ok = live == w
    print("%s %s: wanted %s, file holds %r" % ("ok" if ok else "BAD", k["name"], w, raw))
    bad += not ok
sys.exit(1 if bad else 0)
' "$MMTUNE_LINE"
}

# thp_size_value SIZE: the selected word of hugepages-<SIZE>/enabled.
thp_size_value() {
	sed 's/.*\[\(.*\)\].*/\1/' "/sys/kernel/mm/transparent_hugepage/hugepages-$1/enabled"
}

# hold_lock SECONDS: hold /run/mmtune/lock in the background (as flock(1)
# would); sets $holder to its pid.
hold_lock() {
	mkdir -p /run/mmtune
	python3 -c 'import fcntl, os, sys, time
fd = os.open("/run/mmtune/lock", os.O_RDWR | os.O_CREAT)
fcntl.flock(fd, fcntl.LOCK_EX)
open("/tmp/held", "w").close()
time.sleep(float(sys.argv[1]))' "$1" &
	holder=$!
	rm -f /tmp/held
	wait_for /tmp/held 60
}

# Leave no profile, override, recorded pick or saved state to the next test.
ctl_cleanup() {
	"$MMTUNECTL" rollback >/dev/null 2>&1
	rm -rf /run/mmtune /etc/mmtune/profile /etc/mmtune/profiles /var/lib/mmtune
}
