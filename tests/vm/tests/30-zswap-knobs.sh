# /sys/kernel/mm/mmtune/zswap: defaults, accepted and refused writes (EINVAL,
# old value kept), read-only counters, and the static key following enabled.
. /lib.sh
load_mmtune
assert_eq "$(mmtune_zswap enabled)" 0 "zswap/enabled default"
assert_eq "$(mmtune_zswap backoff_ms)" 1000 "zswap/backoff_ms default"
assert_eq "$(hooks_state zswap_large)" off "zswap_large key with enabled=0"
grep -qx "zswap_large off" $MMTUNE_SYSFS/features || fail "features does not say 'zswap_large off'"

assert_write_ok "$MMTUNE_ZSWAP/enabled" 1
assert_eq "$(hooks_state zswap_large)" on "zswap_large key with enabled=1"
grep -qx "zswap_large on" $MMTUNE_SYSFS/features || fail "features does not say 'zswap_large on'"
for bad in 2 -1 yes on " 1" 1x 0x1 10; do
	assert_write_rejected "$MMTUNE_ZSWAP/enabled" "$bad"
done
assert_write_rejected "$MMTUNE_ZSWAP/enabled" ""
assert_eq "$(hooks_state zswap_large)" on "zswap_large key after rejected writes"
assert_write_ok "$MMTUNE_ZSWAP/enabled" 0
assert_eq "$(hooks_state zswap_large)" off "zswap_large key back off"

assert_write_ok "$MMTUNE_ZSWAP/backoff_ms" 0
assert_write_ok "$MMTUNE_ZSWAP/backoff_ms" 600000
assert_write_ok "$MMTUNE_ZSWAP/backoff_ms" 250
for bad in 600001 -5 4294967296 1e3 "" abc 12ms; do
	assert_write_rejected "$MMTUNE_ZSWAP/backoff_ms" "$bad"
done

for c in thp_stored subpages_stored subpages_rolled_back rollback_pool_limit \
	rollback_cgroup_limit rollback_nomem rollback_compress rollback_other \
	backoff_skipped fallback_disk; do
	assert_eq "$(mmtune_zswap $c)" 0 "counter $c at load"
	assert_eq "$(sysfs_write "$MMTUNE_ZSWAP/$c" 5)" EACCES "writing counter $c"
done
unload_mmtune
