#!/bin/sh
# Run /tests/*.sh whose name matches $1, in name order, as TAP on fd 3.
# A test passes with exit 0, is skipped with 4 (kselftest), fails otherwise.
glob=$1
per_test_timeout=600
list=
for t in /tests/*.sh; do
	name=$(basename "$t" .sh)
	case "$name" in $glob) list="$list $t" ;; esac
done
set -- $list
echo "TAP version 13" >&3
echo "1..$#" >&3
n=0
for t in "$@"; do
	n=$((n + 1))
	name=$(basename "$t" .sh)
	echo "mmtune-test: begin $name" >/dev/kmsg
	echo "# --- begin $name" >&3
	start=$(cut -d' ' -f1 /proc/uptime)
	timeout $per_test_timeout sh "$t" >/tmp/test.out 2>&1
	rc=$?
	end=$(cut -d' ' -f1 /proc/uptime)
	sed 's/^/# /' /tmp/test.out >&3
	secs=$(awk "BEGIN { printf \"%.1f\", $end - $start }")
	case $rc in
	0) echo "ok $n $name # ${secs}s" >&3 ;;
	4) echo "ok $n $name # SKIP $(tail -n 1 /tmp/test.out)" >&3 ;;
	*) echo "not ok $n $name # exit $rc after ${secs}s" >&3 ;;
	esac
	echo "mmtune-test: end $name rc=$rc" >/dev/kmsg
	# A failed test must not leave state that fails the next one.
	for m in mmtune mmtune_probe; do
		grep -q "^$m " /proc/modules && rmmod "$m"
	done
	swapoff -a 2>/dev/null
	echo 0 >/sys/module/zswap/parameters/enabled
	echo 20 >/sys/module/zswap/parameters/max_pool_percent
done
