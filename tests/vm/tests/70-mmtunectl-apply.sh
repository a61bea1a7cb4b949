# Every shipped profile applies on the real kernel, every value it sets is
# in the kernel's files afterwards, verify is clean, absent mmtune groups
# are skipped with one line each, and rollback restores every knob.
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

mkdir -p /etc/mmtune
for p in $PROFILES; do
	# Selected as well as applied: verify counts applied != selected as drift.
	echo "$p" >/etc/mmtune/profile
	ctl_rc 0 apply "$p"
	out_has "applied profile $p: "
	for g in $MMTUNE_GROUPS; do
		if [ -d "$MMTUNE_SYSFS/$g" ]; then
			echo "$out" | grep -q "^skip mmtune\.$g\.\|kernel feature mmtune\.$g " &&
				fail "$g exists but was skipped"
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
	ctl_rc 0 verify
	out_has "verify: profile $p: "
done

ctl_rc 0 rollback
knob_snapshot /tmp/after
same_snapshot /tmp/before /tmp/after "rollback restored every knob"
[ ! -e /run/mmtune/state.json ] || fail "state kept after rollback"
