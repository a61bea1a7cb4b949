# Hot-unplug of a qemu pc-dimm under pcp_churn with pcp_high on: the dimm's
# memory blocks are onlined to ZONE_MOVABLE (where user pages go first, so
# the churn runs through that zone's pagesets), then offlined (pagesets
# disabled, pages migrated) and the dimm ejected through ACPI; the Movable
# zone is gone, every remaining zone's high lies within its bounds, the
# churned data is intact, and with pcp_high off every high is the kernel's
# own value. Needs a pc-dimm: MMTUNE_VM_DIMM=1 tests/vm/run.sh (qemu
# -m 2G,slots=2,maxmem=4G -object memory-backend-ram,id=dimm0,size=256M
# -device pc-dimm,id=dimm0,memdev=dimm0).
# timeout: 300
. /lib.sh
require_feature pcp_high
dimm=
for d in /sys/bus/acpi/devices/PNP0C80:*; do
	[ -e "$d/physical_node" ] && { dimm=$d; break; }
done
[ -n "$dimm" ] || skip "no hot-pluggable memory (no ACPI PNP0C80 device with memory blocks): boot with a qemu pc-dimm (MMTUNE_VM_DIMM=1)"
blocks=$(for l in "$dimm"/physical_node*; do basename "$(readlink -f "$l")" | sed 's/^memory//'; done | sort -n)
info "dimm $(basename "$dimm"): memory blocks $(echo $blocks)"
blk=$(memblk_bytes)
total0=$(memtotal_kib)

swapon_zram 512M
thp_always
load_mmtune
echo 1 >"$MMTUNE_PCP/enabled" || fail "enable pcp_high"
for b in $blocks; do
	case "$(memblk_state "$b")" in
	offline) memblk_set "$b" online_movable || fail "memory$b: online_movable" ;;
	esac
	grep -qw Movable "$MEMBLK/memory$b/valid_zones" || info "memory$b zones: $(cat $MEMBLK/memory$b/valid_zones)"
done
n=$(echo $blocks | wc -w)
total_on=$(memtotal_kib)
info "MemTotal $total0 -> $total_on KiB with the dimm online"
awk '$2 == "Movable"' "$MMTUNE_PCP/zones" | grep -q . || fail "no populated Movable zone with the dimm online"

memory_churn_start 46
sleep 5
cat "$MMTUNE_PCP/zones"
# User pages come from ZONE_MOVABLE first: the churn ran through its pagesets.
movable_free=$(awk '/^Node .* zone +Movable/ { m = 1; next } /^Node/ { m = 0 } m && $1 == "nr_free_pages" { print $2 }' /proc/zoneinfo)
info "Movable nr_free_pages under load: $movable_free"
pcp_bounds_sane "dimm online, under load"

for b in $blocks; do
	memblk_set "$b" offline 120 || fail "memory$b: offline (migrating the churn's pages out)"
done
pcp_bounds_sane "dimm offline"
echo 1 >"$dimm/eject" || fail "ACPI eject of $(basename "$dimm")"
n=0
while [ -e "$MEMBLK/memory${blocks%% *}" ] && [ $n -lt 100 ]; do sleep 0.2; n=$((n + 1)); done
[ -e "$MEMBLK/memory${blocks%% *}" ] && fail "memory${blocks%% *} still present after the eject"
assert_eq "$(memtotal_kib)" "$total0" "MemTotal after the unplug (KiB)"
awk '$2 == "Movable"' "$MMTUNE_PCP/zones" | grep -q . && fail "Movable zone still populated after the unplug"
pcp_bounds_sane "dimm removed"
sleep 3
memory_churn_end "across the unplug"
