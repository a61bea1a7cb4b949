# shellcheck shell=bash
# qemu_timed DUMPDIR SECONDS QEMU-ARG...: run qemu-system-x86_64 with a
# time limit that names a hang. Single-threaded TCG is the caller's
# choice to pass (-accel tcg,thread=single: every kernel test here uses
# it; multi-threaded TCG in qemu 7.2 can loop on a patched static-key
# site). On expiry the guest is asked for its blocked tasks and every
# CPU's backtrace (sysrq w and l onto its console: the kernel command
# line needs sysrq_always_enabled, Debian's kernels allow only 0x1b6),
# the vCPUs' registers go to DUMPDIR/registers.txt and the monitor's
# answers to DUMPDIR/monitor.log (tests/lib/guest-dump.py), then qemu is
# killed and the function returns 124, as timeout(1) does. Otherwise it
# returns qemu's exit status. Sourced by the packaging boots.
qemu_timed() {
	local dump=$1 limit=$2 sock_dir pid rc=0 t0=$SECONDS
	shift 2
	mkdir -p "$dump"
	# A short path: unix socket paths are limited to 108 bytes.
	sock_dir=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-qmp.XXXXXX")
	qemu-system-x86_64 "$@" -qmp "unix:$sock_dir/qmp.sock,server=on,wait=off" &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ $((SECONDS - t0)) -ge "$limit" ]; then
			echo "qemu_timed: time limit of ${limit}s reached: sysrq w and l to the guest's console, registers to $dump/registers.txt" >&2
			/usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/guest-dump.py" "$sock_dir/qmp.sock" "$dump" \
				>"$dump/monitor.log" 2>&1 || true
			kill "$pid" 2>/dev/null
			wait "$pid" 2>/dev/null
			rm -rf "$sock_dir"
			return 124
		fi
		sleep 1
	done
	wait "$pid" || rc=$?
	rm -rf "$sock_dir"
	return $rc
}
