# shellcheck shell=bash
# Helpers sourced by tests/packaging/*.sh, which run from the top of the
# checkout: $repo, the current directory from here on.
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd) && cd "$repo" || exit 2

# TAP output (tests/lib/tap.sh): ok/not ok with a running number; failures
# do not stop a run.
# shellcheck source=tests/lib/tap.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/tap.sh"
# shellcheck source=tests/lib/qemu-timed.sh
. "$(dirname "${BASH_SOURCE[0]}")/../lib/qemu-timed.sh"
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

# Downloads, roots and kernel packages kept between runs.
cache=${MMTUNE_CACHE:-$HOME/.cache/mmtune}

# load_scale: the factor a guest's time limit (MMTUNE_E2E_TIMEOUT, default
# 1200 s a boot) is multiplied by on a busy host, as tests/vm/run.sh
# scales its own: 1 + the 1-minute load per CPU (MMTUNE_PKG_LOAD_SCALE
# overrides it). On expiry qemu_timed ends the guest's console log with
# its blocked tasks and CPU backtraces (sysrq w, l).
load_scale() {
	echo "${MMTUNE_PKG_LOAD_SCALE:-$(awk -v n="$(nproc)" '{ print 1 + int($1 / n) }' /proc/loadavg)}"
}

# guest_boot LOG LIMIT DIR IMAGE RESULTS: boot DIR/vmlinuz and
# DIR/initrd.img with IMAGE as the virtio root under TCG (1 CPU, 1 GiB)
# until the guest powers off or LIMIT seconds pass (qemu_timed); the
# console goes to LOG-console.log, the guest's second serial port to
# RESULTS, qemu's output to LOG-qemu.log, a dump on expiry to LOG-dump*.
guest_boot() {
	local log=$1 limit=$2 dir=$3 image=$4 results=$5
	qemu_timed "$log-dump" "$limit" -accel tcg,thread=single \
		-smp 1 -m 1G -nodefaults -no-reboot -display none \
		-kernel "$dir/vmlinuz" -initrd "$dir/initrd.img" \
		-append "root=/dev/vda rw console=ttyS0,115200 panic=-1 sysrq_always_enabled" \
		-serial "file:$log-console.log" -serial "file:$results" \
		-drive "file=$image,if=virtio,format=raw,cache=unsafe" >"$log-qemu.log" 2>&1
}

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

# rpm_root ROOT ARGS...: the host's rpm on ROOT; scriptlets run chrooted
# there, with /proc and /dev mounted for DKMS.
rpm_root() {
	local r
	r=$(realpath "$1"); shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare --mount --propagation private -- /bin/sh -c '
		r=$1; shift
		mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" &&
		exec rpm --root "$r" "$@"' sh "$r" "$@"
}

# newest_set LINE: the newest finished debian-cloud kernel package set of
# LINE in the cache (cloud.sh, grub-pin.sh).
newest_set() {
	local d
	# shellcheck disable=SC2012 # newest first; the names are ours
	ls -td "${MMTUNE_CACHE:-$HOME/.cache/mmtune}"/kernel-pkgs/"$1"-*/ 2>/dev/null | while read -r d; do
		[ "$(cat "$d/flavour" 2>/dev/null)" = debian-cloud ] && [ -f "$d/.deb-complete" ] && { echo "${d%/}"; break; }
	done
}

# copy_root SRC DST: a private copy of a cached root file system.
copy_root() {
	rm -rf "$2"
	mkdir -p "$(dirname "$2")"
	cp -a "$1" "$2"
}

# install_e2e_guest ROOT CHECK RELEASE VERSION: the guest side of a booted
# test into ROOT: CHECK (a script of tests/packaging/guest/) as
# /usr/local/lib/mmtune-e2e/check.sh with its libraries, run by a oneshot
# unit after multi-user.target that writes TAP to the second serial port
# and powers off, and the release and version it expects.
install_e2e_guest() {
	local r=$1 g=$1/usr/local/lib/mmtune-e2e
	install -D -m 0755 "tests/packaging/guest/$2" "$g/check.sh"
	install -D -m 0644 tests/lib/tap.sh "$g/tap.sh"
	install -D -m 0644 tests/packaging/guest/e2e-lib.sh "$g/e2e-lib.sh"
	install -D -m 0644 tests/packaging/guest/mmtune-e2e.service "$r/etc/systemd/system/mmtune-e2e.service"
	ln -sf /etc/systemd/system/mmtune-e2e.service "$r/etc/systemd/system/multi-user.target.wants/mmtune-e2e.service"
	echo "$3" >"$g/expected-release"
	echo "$4" >"$g/expected-version"
}

# no_private_keys PACKAGE...: fail if any .deb or .rpm carries a private
# key (packaging/repo/check-no-private-keys.py: keys in every encoding,
# in archives of every kind, and private keys' names); one line per
# package, and every package's file list into $pk_logs/contents/.
no_private_keys() {
	packaging/repo/check-no-private-keys.py --list-dir "${pk_logs:-build/packaging/logs}/contents" "$@"
}
