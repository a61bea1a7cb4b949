#!/bin/sh
# Run the /tests/*.sh that $1 chooses (select.sh), group by group in the
# order of /groups (tests/vm/guest/groups), as TAP on fd 3.
# A test passes with exit 0, is skipped with 4 (kselftest), fails otherwise.
#
# Every test runs in a session (so a process group) of its own, under a time
# limit: 300 s, or what a "# timeout: SECONDS" line in the test says, times
# mmtune.timeout_scale (kernel command line, default 1; slower kernels). When
# a test exceeds it, its watchdog dumps the blocked tasks and every CPU's
# backtrace to the console (sysrq w and l), kills the test's process group,
# and the test is reported "not ok ... # timeout after N s"; the next test
# runs, so one hang costs one test. The cleanup between tests runs under a
# limit too (60 s). Processes stuck in the kernel, which SIGKILL cannot end,
# are listed and left behind.
#
# A test with a "# slow: WHY" line runs only with mmtune.slow=1 (every test)
# or mmtune.slow=only (just the slow ones); otherwise it is reported as a
# skip, so "make check" stays short and "make check-slow" runs them.
#
#   run-tests.sh GLOB
#   run-tests.sh --watchdog PID SECS LABEL RUNNER OUT   (internal)
#   run-tests.sh --cleanup                              (internal)
. /tap.sh

default_limit=300
cleanup_limit=60
scale=${MMTUNE_TIMEOUT_SCALE:-1}

# alive PID: the process exists and has not exited (a zombie has).
alive() {
	read -r _stat 2>/dev/null <"/proc/$1/stat" || return 1
	_stat=${_stat##*) }
	[ "${_stat%% *}" != Z ]
}

# group_pids PGID: the live processes of a process group.
group_pids() {
	for _d in /proc/[0-9]*; do
		read -r _stat 2>/dev/null <"$_d/stat" || continue
		_stat=${_stat##*) }
		# state ppid pgrp ...
		set -- $_stat
		[ "$3" = "$_pgid" ] && [ "$1" != Z ] && echo "${_d#/proc/}"
	done
}

# The watchdog of one limited command: sleeps SECS, then, if PID still
# runs, dumps, kills its group and, if the group survives SIGKILL, lists
# what is left in OUT and wakes the runner (SIGUSR1) out of its wait.
watchdog() {
	pid=$1 secs=$2 label=$3 runner=$4 out=$5
	sleep "$secs"
	alive "$pid" || exit 0
	echo "$secs" >/tmp/limited.timeout
	# A fault injection test may have quieted the console.
	echo 7 >/proc/sys/kernel/printk
	echo "mmtune-test: timeout: $label after ${secs}s; sysrq w (blocked tasks), l (all CPUs)" >/dev/kmsg
	echo w >/proc/sysrq-trigger
	echo l >/proc/sysrq-trigger
	_pgid=$pid
	kill -KILL "-$pid" 2>/dev/null
	i=0
	while [ -n "$(group_pids)" ] && [ $i -lt 50 ]; do
		sleep 0.2
		i=$((i + 1))
	done
	left=$(group_pids)
	[ -z "$left" ] && exit 0
	{
		echo "processes of $label still there 10 s after SIGKILL (left behind):"
		for p in $left; do
			echo "pid $p: $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null)"
			grep -E '^(State|Name):' "/proc/$p/status" 2>/dev/null
			echo "wchan: $(cat "/proc/$p/wchan" 2>/dev/null)"
			cat "/proc/$p/stack" 2>/dev/null
		done
	} >>"$out" 2>&1
	kill -USR1 "$runner" 2>/dev/null
	exit 0
}

cleanup() {
	# A failed test must not leave state that fails the next one.
	for m in mmtune mmtune_probe; do
		grep -q "^$m " /proc/modules && rmmod "$m"
	done
	swapoff -a 2>/dev/null
	echo 0 >/sys/module/zswap/parameters/enabled
	echo 20 >/sys/module/zswap/parameters/max_pool_percent
	# Fault injection off, the console loud again (lib-fault.sh).
	for f in failslab fail_page_alloc fail_mmtune_slots_refill; do
		[ -e /sys/kernel/debug/$f/probability ] && echo 0 >/sys/kernel/debug/$f/probability
	done
	echo 7 >/proc/sys/kernel/printk
	# Every folio size (hugepages-<size>kB, 6.12) as at boot (mthp_only).
	[ -s /tmp/.mthp-at-boot ] && while read -r f v; do
		echo "$v" >"$f"
	done </tmp/.mthp-at-boot
	true
}

case "${1:-}" in
--watchdog) shift; watchdog "$@" ;;
--cleanup) cleanup; exit 0 ;;
esac

# limited SECS LABEL OUT CMD...: runs CMD with its output in OUT, in a
# session of its own, for at most SECS seconds. Sets rc to CMD's exit
# status and timed_out to 1 if the time ran out (see watchdog()).
trap 'woken=1' USR1
limited() {
	_secs=$1 _label=$2 _out=$3
	shift 3
	rm -f /tmp/limited.timeout
	woken=0
	setsid "$@" >"$_out" 2>&1 </dev/null &
	_pid=$!
	setsid sh /run-tests.sh --watchdog "$_pid" "$_secs" "$_label" $$ "$_out" &
	_wd=$!
	wait "$_pid"
	rc=$?
	# A SIGUSR1 from the watchdog ends the wait early: the test is stuck.
	[ $woken -eq 1 ] && rc=124
	kill -KILL "-$_wd" "$_wd" 2>/dev/null
	wait "$_wd" 2>/dev/null
	timed_out=0
	if [ -e /tmp/limited.timeout ]; then
		timed_out=1
		rc=124
	fi
}

# test_limit FILE: the test's time limit in seconds.
test_limit() {
	_l=$(sed -n 's/^# timeout: *\([0-9][0-9]*\).*/\1/p' "$1" | head -n 1)
	echo $(( ${_l:-$default_limit} * scale ))
}

# is_slow FILE: the test declares itself slow.
is_slow() { grep -q '^# slow:' "$1"; }

TAP_FD=3
glob=$1
# The per-size THP settings at boot, which the cleanup restores: "FILE
# VALUE" (the bracketed word) for every hugepages-<size>kB/{,shmem_}enabled.
for f in /sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled \
	/sys/kernel/mm/transparent_hugepage/hugepages-*kB/shmem_enabled; do
	[ -r "$f" ] || continue
	v=$(cat "$f")
	v=${v#*[}
	echo "$f ${v%%]*}"
done >/tmp/.mthp-at-boot
slow=${MMTUNE_SLOW:-0}
list=
. /select.sh
for t in $(tests_in_order /tests /groups); do
	name=$(basename "$t" .sh)
	test_chosen "$name" "$glob" || continue
	[ "$slow" = only ] && ! is_slow "$t" && continue
	list="$list $t"
done
set -- $list
tap_header
tap_plan $#
for t in "$@"; do
	name=$(basename "$t" .sh)
	if [ "$slow" = 0 ] && is_slow "$t"; then
		tap_skip "$name" "slow test ($(sed -n 's/^# slow: *//p' "$t" | head -n 1)); make check-slow runs it"
		continue
	fi
	limit=$(test_limit "$t")
	echo "mmtune-test: begin $name" >/dev/kmsg
	echo "# --- begin $name (limit ${limit}s)" >&3
	start=$(cut -d' ' -f1 /proc/uptime)
	limited "$limit" "$name" /tmp/test.out sh "$t"
	end=$(cut -d' ' -f1 /proc/uptime)
	tap_diag </tmp/test.out
	secs=$(awk "BEGIN { printf \"%.1f\", $end - $start }")
	if [ $timed_out -eq 1 ]; then
		tap_not_ok "$name # timeout after $limit s"
	else
		case $rc in
		0) tap_ok "$name # ${secs}s" ;;
		4) tap_skip "$name" "$(tail -n 1 /tmp/test.out)" ;;
		*) tap_not_ok "$name # exit $rc after ${secs}s" ;;
		esac
	fi
	echo "mmtune-test: end $name rc=$rc" >/dev/kmsg
	limited $((cleanup_limit * scale)) "cleanup after $name" /tmp/cleanup.out sh /run-tests.sh --cleanup
	if [ $timed_out -eq 1 ] || [ -s /tmp/cleanup.out ]; then
		tap_diag "cleanup after $name$([ $timed_out -eq 1 ] && echo ": timeout after $((cleanup_limit * scale)) s"):"
		tap_diag </tmp/cleanup.out
	fi
done
