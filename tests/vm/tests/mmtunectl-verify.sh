# verify: exit 0 when the kernel holds the profile, 1 naming each knob
# changed by hand (a per-size mTHP switch on 6.12 too), 0 again after apply
# --auto; recommend copes with a guest that has no systemd-detect-virt and
# no DMI.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT

ctl_rc 0 recommend -v
out_has "virt=unknown"

mkdir -p /etc/mmtune
echo database >/etc/mmtune/profile
ctl_rc 0 apply --auto
out_has "profile database (override in /etc/mmtune/profile)"
ctl_rc 0 verify

echo 77 >/proc/sys/vm/swappiness
ctl_rc 1 verify
out_has "drift: sysctl.vm.swappiness: wanted 10, live 77"
echo always >/sys/kernel/mm/transparent_hugepage/enabled
ctl_rc 1 verify
out_has "drift: thp.enabled: wanted never, live always"
out_has "2 differ"
if [ -f "$MMTUNE_SYSFS/zswap_large/enabled" ]; then
	echo 0 >"$MMTUNE_SYSFS/zswap_large/enabled"
	ctl_rc 1 verify
	out_has "drift: mmtune.zswap_large.enabled: wanted 1, live 0"
fi
# Per size (6.12): database wants 2M folios on madvise.
h2m=/sys/kernel/mm/transparent_hugepage/hugepages-2048kB/enabled
if [ -f "$h2m" ]; then
	assert_eq "$(thp_size_value 2048kB)" madvise "database: hugepages-2048kB/enabled"
	echo never >"$h2m"
	ctl_rc 1 verify
	out_has "drift: thp.hugepages-2048kB.enabled: wanted madvise, live never"
elif [ "$MMTUNE_LINE" = 6.12 ]; then
	fail "6.12 without $h2m"
fi

ctl_rc 1 status
out_has "health: drift (exit 1)"
# Preview: diff lists exactly what apply --auto puts back, and writes nothing.
ctl_rc 1 diff
out_has "change sysctl.vm.swappiness: 77 -> 10"
ctl_rc 0 apply --dry-run
out_has "would set thp.enabled: always -> never"
assert_eq "$(cat /proc/sys/vm/swappiness)" 77 "dry run wrote nothing"
ctl_rc 0 apply --auto
ctl_rc 0 verify
out_has "0 differ"
if [ -f "$h2m" ]; then
	assert_eq "$(thp_size_value 2048kB)" madvise "apply --auto put hugepages-2048kB/enabled back"
fi
ctl_rc 0 diff
out_has "no change, the kernel holds it"
ctl_rc 0 status
out_has "health: ok (exit 0)"
