# Helpers sourced by tests/packaging/*.sh.

# TAP output: ok/not ok with a running number; failures do not stop a run.
tap_n=0
tap_failed=0
tap_skipped=0
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n $*"; }
not_ok() { tap_n=$((tap_n + 1)); tap_failed=$((tap_failed + 1)); echo "not ok $tap_n $*"; }
skip() { tap_n=$((tap_n + 1)); tap_skipped=$((tap_skipped + 1)); echo "ok $tap_n $1 # SKIP $2"; }
# check NAME CMD...: one test from a command's exit status; its output is
# shown as TAP comments.
check() {
	local name=$1 out rc=0; shift
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then ok "$name"; else not_ok "$name (exit $rc)"; fi
	return $rc
}
note() { printf '%s\n' "$*" | sed 's/^/# /'; }

# in_root ROOT CMD...: run CMD chrooted into ROOT with /proc, /sys and /dev
# mounted in a private mount namespace (gone when the command ends).
in_root() {
	local root=$1; shift
	unshare --mount --propagation private -- /bin/sh -c '
		root=$1; shift
		mount -t proc proc "$root/proc" &&
		mount -t sysfs sysfs "$root/sys" &&
		mount --rbind /dev "$root/dev" &&
		exec chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
			HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"' sh "$root" "$@"
}

# copy_root SRC DST: a private copy of a cached root file system.
copy_root() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	cp -a "$1" "$2"
}
