# Every shipped profile applies on the real kernel, every value it sets is
# in the kernel's files afterwards (the per-size mTHP switches on 6.12),
# verify is clean, absent mmtune groups are skipped with one line each, the
# knobs of the other kernel line (6.1's groups on 6.12, the per-size knobs
# on 6.1) all in one "skipped:" line, and rollback restores every knob.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT
knob_snapshot /tmp/before

# profile swappiness thp.enabled zswap.compressor zswap.max_pool_percent
expected="balanced 60 madvise lz4 20
database 10 never lz4 20
web-latency 30 madvise lz4 20
batch-throughput 100 always zstd 30
virtualization-host 100 always zstd 40
container-host 60 madvise lz4 25"
# profile size=value...: the per-size switches it sets (6.12,
# hugepages-<size>/enabled); every other size keeps its value from before.
expected_sizes="database 2048kB=madvise
batch-throughput 64kB=always
container-host 16kB=always 32kB=always 64kB=always"
sizes=$(ls -d /sys/kernel/mm/transparent_hugepage/hugepages-*kB 2>/dev/null | sed 's/.*hugepages-//')
case $MMTUNE_LINE in
6.12) [ -n "$sizes" ] || fail "6.12 without hugepages-<size>kB directories" ;;
*) [ -z "$sizes" ] || fail "hugepages-<size>kB directories on $MMTUNE_LINE" ;;
esac
# The selected value of each size before any profile.
for s in $sizes; do
	[ -f "/sys/kernel/mm/transparent_hugepage/hugepages-$s/enabled" ] || continue
	echo "$s $(thp_size_value "$s")"
done >/tmp/sizes-before

mkdir -p /etc/mmtune
for p in $PROFILES; do
	# Selected as well as applied: verify counts applied != selected as drift.
	echo "$p" >/etc/mmtune/profile
	ctl_rc 0 apply "$p"
	out_has "applied profile $p: "
	# The knobs of the other kernel line: one line for all of them.
	other=$(echo "$out" | grep "^skipped: [0-9]* knob(s) not on this kernel line ($MMTUNE_LINE), only on ")
	[ "$(echo "$out" | grep -c '^skipped: ')" -le 1 ] || fail "$p: more than one 'skipped:' line"
	for g in $MMTUNE_GROUPS; do
		if [ -d "$MMTUNE_SYSFS/$g" ]; then
			echo "$out" | grep -q "^skip mmtune\.$g\.\|kernel feature mmtune\.$g " &&
				fail "$g exists but was skipped"
		elif echo "$other" | grep -q "[:,] mmtune\.$g\."; then
			# A group of the other line only (6.1's on 6.12): not a
			# missing feature, no warning of its own.
			echo "$out" | grep -q "kernel feature mmtune\.$g " &&
				fail "$g: other line's group warned about as well"
			info "ok: $g (not on $MMTUNE_LINE) in the one skipped line"
		else	# every shipped profile sets each group (balanced does)
			out_has "warning: kernel feature mmtune.$g is absent"
		fi
	done
	readback_check || fail "$p: a value is not in the kernel"
	set -- $(echo "$expected" | awk -v p="$p" '$1 == p')
	[ $# -eq 5 ] || fail "no expectation for $p"
	assert_eq "$(cat /proc/sys/vm/swappiness)" "$2" "$p: vm.swappiness"
	assert_eq "$(sed 's/.*\[\(.*\)\].*/\1/' /sys/kernel/mm/transparent_hugepage/enabled)" "$3" "$p: THP enabled"
	assert_eq "$(cat /sys/module/zswap/parameters/compressor)" "$4" "$p: zswap compressor"
	assert_eq "$(cat /sys/module/zswap/parameters/max_pool_percent)" "$5" "$p: zswap max_pool_percent"
	assert_eq "$(cat /sys/module/zswap/parameters/enabled)" Y "$p: zswap enabled"
	if [ -f "$MMTUNE_SYSFS/zswap_large/enabled" ]; then
		assert_eq "$(cat $MMTUNE_SYSFS/zswap_large/enabled)" 1 "$p: mmtune zswap enabled"
	fi
	# Per size: the values this profile sets, every other size as before.
	want_sizes=$(echo "$expected_sizes" | awk -v p="$p" '$1 == p { $1 = ""; print }')
	if [ -n "$sizes" ]; then
		while read -r s before; do
			want=$before
			for kv in $want_sizes; do
				[ "${kv%%=*}" = "$s" ] && want=${kv#*=}
			done
			assert_eq "$(thp_size_value "$s")" "$want" "$p: hugepages-$s/enabled"
		done </tmp/sizes-before
	else	# 6.1: the per-size knobs are in the one skipped line
		for kv in $want_sizes; do
			echo "$other" | grep -q "[:,] thp\.hugepages-${kv%%=*}\.enabled\(,\|\$\)" ||
				fail "$p: thp.hugepages-${kv%%=*}.enabled not in the skipped line"
		done
	fi
	ctl_rc 0 verify
	out_has "verify: profile $p: "
done

ctl_rc 0 rollback
knob_snapshot /tmp/after
same_snapshot /tmp/before /tmp/after "rollback restored every knob"
[ ! -e /run/mmtune/state.json ] || fail "state kept after rollback"
