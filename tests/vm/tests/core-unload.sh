# Unloading removes /sys/kernel/mm/mmtune and turns every hook key off.
# The probe switches every key on first, so "off" is a real change.
# tier: check
. /lib.sh
i=0
while [ $i -lt 5 ]; do
	load_mmtune
	[ -d "$MMTUNE_SYSFS" ] || fail "no $MMTUNE_SYSFS after load"
	unload_mmtune
	assert_hooks_idle
	i=$((i + 1))
done

# Every group's bit, from the kernel's own list of groups.
insmod "$PROBE_KO" features=$(( (1 << $(echo $FEATURES | wc -w)) - 1 )) ||
	fail "probe with every feature"
cat "$HOOKS_STATE"
for f in $FEATURES; do
	assert_eq "$(hooks_state "$f")" on "static key $f with the probe loaded"
done
rmmod mmtune_probe || fail "rmmod mmtune_probe"
cat "$HOOKS_STATE"
assert_hooks_idle
