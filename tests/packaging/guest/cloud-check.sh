#!/bin/sh
# Guest side of tests/packaging/cloud.sh, the operator image: one Debian
# root (12 or 13) where apt installed, from the signed local repository,
# mmtune and mmtune-kernel-<line>-cloud-amd64 (our cloud-config kernel of
# one line and its signed mmtune-modules), with a stock Debian kernel of
# the same line beside them; booted twice. The kernel that booted says
# which half runs:
#   our kernel    (module.sig_enforce=1, through the host's busybox
#                 initramfs) the signed module loaded, unsigned and
#                 foreign-key copies refused, no E taint; the host-class
#                 profile the recommend rules pick for a container host
#                 (container-host: /usr/bin/containerd is there) applied,
#                 recorded and verified; swap round trips byte-equal
#                 through zswap and the disk; on 6.12 64K and 2M folios
#                 stored whole in zswap and read back equal; "apt-get
#                 upgrade" to mmtune <ver>+up1 keeps every tuned value;
#                 stop rolls back; no failed units
#   stock kernel  (Debian's initramfs) mmtunectl says no hooks, verify 5,
#                 no failed units
# TAP on /dev/ttyS1. Installed as /usr/local/lib/mmtune-e2e/check.sh and
# run by mmtune-e2e.service after multi-user.target.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh
signer=$(cat $dir/expected-signer)
line=$(cat $dir/expected-line)
profile=$(cat $dir/expected-profile)
stock=$(cat $dir/expected-stock-release)
bump=$(cat $dir/expected-bump)
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }
thp=/sys/kernel/mm/transparent_hugepage zs=/sys/module/zswap/parameters mm=/sys/kernel/mm/mmtune
knob() { printf '%s=%s' "$1" "$(cat "$1" 2>&1)"; }

ours() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s, init $(readlink /proc/1/exe)"
	tap_diag "cmdline: $(cat /proc/cmdline)"
	tap_ok "running the packaged $line cloud kernel $rel"
	[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] && tap_ok "systemd is init" || tap_not_ok "systemd is init"
	signed_module_checks "$signer"
	modprobe_unit 0
	no_boot_errors
	v=$(cat $mm/version 2>&1)
	[ "$v" = "$ver" ] && tap_ok "$mm/version is $ver" || tap_not_ok "$mm/version is $ver (got $v)"

	# --- the host-class profile ---------------------------------------
	profile_checks "$profile"
	tap_diag "mmtunectl recommend: $(mmtunectl recommend 2>&1 | tr '\n' ' ')"
	# The profile's values against the cloud kernel's stock ones (its
	# .config: THP always, zswap off with lzo; per-size: never).
	got="$(knob $thp/enabled) $(knob $thp/defrag) $(knob $zs/enabled) $(knob $zs/compressor) $(knob $zs/zpool) $(knob $zs/max_pool_percent) $(knob /proc/sys/vm/watermark_scale_factor)"
	want="$thp/enabled=always [madvise] never $thp/defrag=always defer [defer+madvise] madvise never $zs/enabled=Y $zs/compressor=lz4 $zs/zpool=zsmalloc $zs/max_pool_percent=25 /proc/sys/vm/watermark_scale_factor=100"
	case $line in
	6.1)
		got="$got $(knob $mm/swap_slots/cache_size)"
		want="$want $mm/swap_slots/cache_size=128" ;;
	*)
		got="$got $(knob $thp/hugepages-16kB/enabled) $(knob $thp/hugepages-64kB/enabled) $(knob $thp/hugepages-2048kB/enabled) $(knob $mm/thp_swap/policy) $(knob $mm/thp_swap/policy_16kB) $(knob $mm/zswap_large/enabled)"
		want="$want $thp/hugepages-16kB/enabled=[always] inherit madvise never $thp/hugepages-64kB/enabled=[always] inherit madvise never $thp/hugepages-2048kB/enabled=always [inherit] madvise never $mm/thp_swap/policy=split [adaptive] $mm/thp_swap/policy_16kB=inherit [whole] split adaptive $mm/zswap_large/enabled=1" ;;
	esac
	tap_diag "live: $got"
	[ "$got" = "$want" ] && tap_ok "$profile's values in force on $line (THP madvise, defer+madvise, zswap lz4/zsmalloc 25%, watermark_scale_factor 100$([ "$line" = 6.1 ] && echo ', swap_slots 128' || echo '; per size: 16K-64K always, 2M inherit, thp_swap adaptive, 16K whole'))" ||
		tap_not_ok "$profile's values in force on $line (want: $want)"

	# --- swap round trips ---------------------------------------------
	# A cloud instance swaps on an SSD (NVMe, EBS); qemu's virtio disk
	# says it is rotational, and the kernel swaps a large folio out whole
	# only to a non-rotational device (swap clusters): say it is one.
	echo 0 >/sys/block/vdb/queue/rotational
	if mkswap /dev/vdb >/dev/null 2>&1 && swapon /dev/vdb; then
		tap_ok "swap on /dev/vdb (virtio_blk, a signed Debian-config module; non-rotational, as a cloud SSD)"
	else
		tap_not_ok "swap on /dev/vdb"
	fi
	for fill in compressible random; do
		z0=$(vmstat zswpout) p0=$(vmstat pswpout)
		out=$(swap_integrity --size 96 --no-thp --fill $fill 2>&1); rc=$?
		z1=$(vmstat zswpout) p1=$(vmstat pswpout)
		tap_diag "$out"
		if [ $rc -eq 0 ]; then
			tap_ok "swap round trip, $fill 96 MiB: every byte equal after swap-out and back (zswpout +$((z1 - z0)), pswpout +$((p1 - p0)))"
		else
			tap_not_ok "swap round trip, $fill 96 MiB (swap_integrity exit $rc)"
		fi
		[ $fill = compressible ] && { [ $((z1 - z0)) -gt 0 ] && tap_ok "compressible pages went to zswap (lz4, zsmalloc)" ||
			tap_not_ok "compressible pages went to zswap (zswpout +$((z1 - z0)))"; }
	done
	out=$(swap_integrity --size 64 --thp --fill compressible 2>&1); rc=$?
	tap_diag "$out"
	[ $rc -eq 0 ] && tap_ok "swap round trip, THP 64 MiB compressible: every byte equal" || tap_not_ok "swap round trip, THP 64 MiB (exit $rc)"
	if [ -d $thp/hugepages-64kB ]; then
		mthp_zswap_round 64 61
		mthp_zswap_round 2048 62
	fi

	# --- upgrade in place ---------------------------------------------
	upgrade_in_place "$bump"

	# --- rollback -------------------------------------------------------
	systemctl stop mmtune.service
	got="$(knob $thp/enabled) $(knob $zs/enabled)"
	want="$thp/enabled=[always] madvise never $zs/enabled=N"
	if [ "$line" != 6.1 ]; then
		got="$got $(knob $thp/hugepages-64kB/enabled)"
		want="$want $thp/hugepages-64kB/enabled=always inherit madvise [never]"
	fi
	[ "$got" = "$want" ] && tap_ok "systemctl stop mmtune.service rolls back to the stock values ($got)" || tap_not_ok "stop rolls back (got $got; want $want)"
	no_failed_units
	tap_diag "$(systemd-analyze 2>&1 | head -n 1)"
}

# si OUT NAME: a value of swap_integrity's "deltas:" line.
si() { awk -v k="$2" '/^deltas:/ { for (i = 2; i <= NF; i++) { split($i, kv, "="); if (kv[1] == k) print kv[2] } }' "$1"; }
zl() { cat $mm/zswap_large/"$1"; }

# mthp_zswap_round KB SEED: 32 MiB of anonymous memory faulted in KB
# folios (under the profile: 64K is "always"; for the 64K round 2M is
# "never" for its duration, so that 64K is the largest size a fault
# gets), paged out (MADV_PAGEOUT, then its memcg's memory.reclaim) and
# read back. Stored whole: the size's zswpout (the series' per-size
# counter) and mmtune's zswap_large/thp_stored count every folio,
# subpages_stored its pages, vmstat zswpout every page; nothing went to
# the disk (pswpout, the size's swpout) or fell back to it; every byte
# read back equal.
mthp_zswap_round() {
	kb=$1 pages=$(($1 / 4)) o=/run/si-$1.out
	old2m=$(sed 's/.*\[\(.*\)\].*/\1/' $thp/hugepages-2048kB/enabled)
	[ "$kb" = 64 ] && echo never >$thp/hugepages-2048kB/enabled
	t0=$(zl thp_stored) s0=$(zl subpages_stored) f0=$(zl fallback_disk) w0=$(cat $mm/thp_swap/thp_whole) x0=$(cat $mm/thp_swap/thp_split)
	swap_integrity --thp --mthp "$kb" --size 32 --fill compressible --evict pageout --min-out-pct 100 --seed "$2" >$o 2>&1; rc=$?
	echo "$old2m" >$thp/hugepages-2048kB/enabled
	tap_diag "$(cat $o)"
	folios=$(si $o region_folios)
	got="folios $folios, hugepages-${kb}kB zswpout $(si $o mthp_zswpout) swpout $(si $o mthp_swpout), thp_stored +$(( $(zl thp_stored) - t0 )), subpages_stored +$(( $(zl subpages_stored) - s0 )), fallback_disk +$(( $(zl fallback_disk) - f0 )), zswpout $(si $o zswpout) of $(si $o pages) pages, pswpout $(si $o pswpout)"
	want="folios $folios, hugepages-${kb}kB zswpout $folios swpout 0, thp_stored +$folios, subpages_stored +$((folios * pages)), fallback_disk +0, zswpout $(si $o pages) of $(si $o pages) pages, pswpout 0"
	tap_diag "thp_swap (adaptive): thp_whole +$(( $(cat $mm/thp_swap/thp_whole) - w0 )), thp_split +$(( $(cat $mm/thp_swap/thp_split) - x0 ))"
	[ $rc -eq 0 ] && tap_ok "${kb}K folios: 32 MiB through zswap and back, every byte equal" ||
		tap_not_ok "${kb}K folios: 32 MiB round trip through zswap (swap_integrity exit $rc)"
	if [ "${folios:-0}" -gt 0 ] && [ "$got" = "$want" ]; then
		tap_ok "${kb}K folios stored whole in zswap: $got"
	else
		tap_not_ok "${kb}K folios stored whole in zswap: got $got; want $want"
	fi
}

case "$(uname -r)" in
"$rel") ours ;;
"$stock") stock_kernel_checks "$stock" ;;
*) tap_not_ok "booted $rel or $stock (got $(uname -r))" ;;
esac
echo "# e2e: done" >&3
