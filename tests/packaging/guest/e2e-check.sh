#!/bin/sh
# Guest side of the end-to-end test: TAP on /dev/ttyS1.
exec 3>/dev/ttyS1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
n=0
ok() { n=$((n + 1)); echo "ok $n $*" >&3; }
not_ok() { n=$((n + 1)); echo "not ok $n $*" >&3; }
note() { printf '%s\n' "$*" | sed 's/^/# /' >&3; }
dir=/usr/local/lib/mmtune-e2e
rel=$(cat $dir/expected-release)
ver=$(cat $dir/expected-version)

note "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s, init $(readlink /proc/1/exe)"
[ "$(uname -r)" = "$rel" ] && ok "running the packaged kernel $rel" || not_ok "running the packaged kernel $rel (got $(uname -r))"
[ "$(readlink /proc/1/exe)" = /usr/lib/systemd/systemd ] && ok "systemd is init" || not_ok "systemd is init"

if grep -q '^mmtune ' /proc/modules; then
	ok "mmtune.ko is loaded at boot (modules-load.d)"
else
	not_ok "mmtune.ko is loaded at boot"
	note "$(systemctl status systemd-modules-load.service 2>&1 | tail -n 15)"
fi
f=$(modinfo -n mmtune 2>&1)
case "$f" in
/lib/modules/$rel/updates/dkms/mmtune.ko*) ok "the loaded module is the DKMS one ($f)" ;;
*) not_ok "the loaded module is the DKMS one (modinfo -n: $f)" ;;
esac
v=$(cat /sys/kernel/mm/mmtune/version 2>&1)
[ "$v" = "$ver" ] && ok "/sys/kernel/mm/mmtune/version is $ver" || not_ok "/sys/kernel/mm/mmtune/version is $ver (got $v)"

st=$(systemctl is-active mmtune.service 2>&1)
if [ "$st" = active ]; then ok "mmtune.service is active"; else not_ok "mmtune.service is active (got $st)"; fi
note "$(systemctl status mmtune.service --no-pager 2>&1 | head -n 20)"
en=$(systemctl is-enabled mmtune.service 2>&1)
[ "$en" = enabled ] && ok "mmtune.service is enabled" || not_ok "mmtune.service is enabled (got $en)"

out=$(mmtunectl verify 2>&1); rc=$?
note "mmtunectl verify:"; note "$out"
[ $rc -eq 0 ] && ok "mmtunectl verify exits 0" || not_ok "mmtunectl verify exits 0 (got $rc)"

failed=$(systemctl list-units --state=failed --no-legend --plain 2>&1)
if [ -z "$failed" ]; then ok "no failed units"; else not_ok "no failed units"; note "$failed"; fi
note "$(systemd-analyze 2>&1 | head -n 1)"
echo "# e2e: done" >&3
