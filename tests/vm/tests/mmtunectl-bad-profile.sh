# A bad profile changes nothing: syntax and range errors are caught before
# any write (file and line named); a value the kernel refuses half way
# through is undone, every knob written before it restored.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap ctl_cleanup EXIT
mkdir -p /etc/mmtune
echo balanced >/etc/mmtune/profile
ctl_rc 0 apply balanced
knob_snapshot /tmp/before
cp /run/mmtune/state.json /tmp/state.before
mkdir -p /etc/mmtune/profiles

printf '[sysctl]\nvm.swappiness = 5\n[zswap]\nmax_pool_percent = 150\n' >/etc/mmtune/profiles/range.conf
ctl_rc 2 apply range
out_has "error: /etc/mmtune/profiles/range.conf:4: zswap.max_pool_percent: 150 is out of range (1..100)"
out_has "error: nothing applied"

printf '[sysctl]\nvm.swappiness = 5\nvm.swapiness = 6\n' >/etc/mmtune/profiles/typo.conf
ctl_rc 2 apply typo
out_has "error: /etc/mmtune/profiles/typo.conf:3: unknown key 'vm.swapiness' in [sysctl]"

printf '[sysctl]\nvm.swappiness = 5\n[thp]\nenabled = never\n[zswap]\ncompressor = nosuchalg\n' \
	>/etc/mmtune/profiles/refused.conf
ctl_rc 2 apply refused
out_has "error: writing 'nosuchalg' to /sys/module/zswap/parameters/compressor"
out_has "restored 2 knob(s) written before the failure: sysctl.vm.swappiness, thp.enabled; nothing changed"

if [ ! -d "$MMTUNE_SYSFS/swap_slots" ]; then
	# Required means required where the feature exists: a module without
	# the group skips even an unmarked knob, with one line; on a kernel
	# line without the group (6.12) that is the other line's one line.
	printf '[sysctl]\nvm.swappiness = 5\n[mmtune.swap_slots]\nenabled = 1\n' >/etc/mmtune/profiles/strict.conf
	ctl_rc 0 apply --dry-run strict
	if [ -n "$(knob_rows swap_slots)" ]; then
		out_has "warning: kernel feature mmtune.swap_slots is absent"
	else
		out_has "skipped: 1 knob(s) not on this kernel line ($MMTUNE_LINE), only on 6.1: mmtune.swap_slots.enabled"
		echo "$out" | grep -q "kernel feature mmtune.swap_slots " &&
			fail "swap_slots, a group of another line, warned about as absent"
	fi
fi

knob_snapshot /tmp/after
same_snapshot /tmp/before /tmp/after "no knob changed by the bad profiles"
cmp /tmp/state.before /run/mmtune/state.json || fail "saved state changed"
ctl_rc 0 verify
