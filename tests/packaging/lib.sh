# Helpers sourced by tests/packaging/*.sh.

# TAP output (tests/lib/tap.sh): ok/not ok with a running number; failures
# do not stop a run.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
ok() { tap_ok "$@"; }
not_ok() { tap_not_ok "$@"; }
skip() { tap_skip "$1" "$2"; }
# check NAME CMD...: one test from a command's exit status; its output is
# shown as TAP comments.
check() {
	local name=$1 out rc=0; shift
	out=$("$@" 2>&1) || rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | sed 's/^/# /'
	if [ $rc -eq 0 ]; then ok "$name"; else not_ok "$name (exit $rc)"; fi
	return $rc
}
note() { tap_diag "$*"; }

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
