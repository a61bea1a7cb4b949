#!/bin/sh
# The main job's guest side: load mmtune, show what it exposes, run the swap
# round trip on the virtio disk and on zram, unload. Output goes to the host.
. /lib.sh
failed() { echo "DEMO FAILED: $*"; touch /tmp/demo-failed; }

echo "== kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { print $2 / 1024 " MiB" }' /proc/meminfo)"
echo "== hook core before loading ($HOOKS_STATE)"
cat "$HOOKS_STATE"

echo "== insmod mmtune.ko"
insmod "$MMTUNE_KO" || failed "insmod"
dmesg | grep -E 'mmtune' | tail -n 3
echo "== $MMTUNE_SYSFS"
find "$MMTUNE_SYSFS" -type f | sort | while read -r f; do
	printf '%s (%s):\n' "${f#$MMTUNE_SYSFS/}" "$(stat -c %A "$f")"
	sed 's/^/    /' "$f"
done
echo "== hook core with mmtune loaded"
cat "$HOOKS_STATE"

thp_always
echo "== swap round trip: 128 MiB of THPs, MADV_PAGEOUT, virtio disk"
swapon_disk
swap_integrity --size 128 --thp --evict pageout --expect-thp-swpout || failed "virtio disk"
echo "== swap round trip: 128 MiB of THPs in a 48 MiB memcg, zram"
swapon_zram 1G
swap_integrity --size 128 --thp --evict memcg-max --limit 48 || failed "zram"
swapoff_all

echo "== zswap_large: 64 MiB of THPs, MADV_PAGEOUT, zswap (lz4/zsmalloc) in front of the virtio disk"
swapon_disk
zswap_enable
for state in 0 1; do
	echo $state >"$MMTUNE_ZSWAP/enabled"
	echo "-- zswap/enabled=$state"
	swap_integrity --size 64 --thp --fill compressible --evict pageout --seed $((60 + state)) ||
		failed "zswap_large enabled=$state"
done
echo "-- $MMTUNE_ZSWAP counters"
for f in thp_stored subpages_stored fallback_disk; do
	printf '    %s %s\n' "$f" "$(mmtune_zswap $f)"
done
zswap_disable
swapoff_all

echo "== rmmod mmtune"
rmmod mmtune || failed "rmmod"
[ -e "$MMTUNE_SYSFS" ] && failed "$MMTUNE_SYSFS still there"
cat "$HOOKS_STATE"
