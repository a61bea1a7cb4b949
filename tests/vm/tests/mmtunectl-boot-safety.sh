# Safe at boot on the real kernel: a held lock gives up with a clear error
# and exit 6 (the boot unit must not hang); an optional knob the kernel
# refuses is skipped with a warning while the rest of the profile applies;
# check validates a file the way Ansible's validate: uses it.
. /lib.sh
. /mmtunectl-lib.sh
load_mmtune
trap 'kill $holder 2>/dev/null; ctl_cleanup' EXIT

hold_lock 60
before=$(cat /proc/sys/vm/swappiness)
start=$(cut -d' ' -f1 /proc/uptime)
ctl_rc 6 --lock-timeout 2 apply database
took=$(awk -v s="$start" -v e="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { print e - s }')
out_has "error: /run/mmtune/lock is held by pid $holder; gave up after 2 s (--lock-timeout); nothing changed"
assert_eq "$(cat /proc/sys/vm/swappiness)" "$before" "swappiness untouched while locked"
awk -v t="$took" 'BEGIN { exit !(t < 20) }' || fail "gave up after ${took}s"
kill $holder
wait $holder 2>/dev/null
ctl_rc 0 apply database

# The kernel checks threshold <= sample_size against the live sample_size,
# which the profile does not set: check compares with the module's default
# (32), so threshold 16 is a valid profile value that this kernel, its
# sample_size lowered to 8 by hand, refuses.
echo 8 >$MMTUNE_SYSFS/thp_swap/sample_size || fail "thp_swap sample_size 8"
mkdir -p /etc/mmtune/profiles
printf '[sysctl]\nvm.swappiness = 7\n[?mmtune.thp_swap]\nthreshold = 16\npolicy = adaptive\n' \
	>/etc/mmtune/profiles/refused.conf
ctl_rc 0 check /etc/mmtune/profiles/refused.conf
ctl_rc 0 apply refused
out_has "warning: mmtune.thp_swap.threshold: the kernel refused '16' (/sys/kernel/mm/mmtune/thp_swap/threshold): Invalid argument; optional in /etc/mmtune/profiles/refused.conf:4, skipped"
out_has ", 1 refused"
assert_eq "$(cat /proc/sys/vm/swappiness)" 7 "required knob applied"
assert_eq "$(sed "s/.*\[\(.*\)\].*/\1/" $MMTUNE_SYSFS/thp_swap/policy)" adaptive "the other optional knob applied"
assert_eq "$(cat $MMTUNE_SYSFS/thp_swap/threshold)" 4 "refused knob unchanged"
ctl_rc 1 verify
out_has "drift: mmtune.thp_swap.threshold: wanted 16, live 4"

# The same refusal on a required knob: all or nothing.
printf '[sysctl]\nvm.swappiness = 8\n[mmtune.thp_swap]\nthreshold = 16\n' >/etc/mmtune/profiles/strict.conf
ctl_rc 2 apply strict
out_has "restored"
assert_eq "$(cat /proc/sys/vm/swappiness)" 7 "nothing changed by the failed apply"

printf '[sysctl]\nvm.swappiness = 300\n' >/tmp/bad.conf
ctl_rc 2 check /tmp/bad.conf
out_has "error: /tmp/bad.conf:2: sysctl.vm.swappiness: 300 is out of range (0..200)"
