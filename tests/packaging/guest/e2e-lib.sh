# Sourced by the guest checks (e2e-check.sh, cloud-check.sh): TAP on
# /dev/ttyS1 through the project's TAP helper (tests/lib/tap.sh), both
# installed beside them by install_e2e_guest (tests/packaging/lib.sh), and
# the release and version the host expects to find.
exec 3>/dev/ttyS1
stty -F /dev/ttyS1 raw -echo 2>/dev/null
dir=/usr/local/lib/mmtune-e2e
TAP_FD=3
# shellcheck source=tests/lib/tap.sh
. $dir/tap.sh
rel=$(cat $dir/expected-release)
ver=$(cat $dir/expected-version)

# The TAP line every booted check ends with: no systemd unit failed.
no_failed_units() {
	failed=$(systemctl list-units --state=failed --no-legend --plain 2>&1)
	if [ -z "$failed" ]; then tap_ok "no failed units"; else
		tap_not_ok "no failed units"; tap_diag "$failed"
		for u in $(echo "$failed" | awk '{ print $1 }'); do
			tap_diag "$(journalctl -b -u "$u" -o short-monotonic --no-pager 2>&1 | tail -n 20)"
		done
	fi
}

# modprobe_unit STATUS: modprobe@mmtune.service (what loads mmtune.ko,
# systemd/units/mmtune.service.d/10-modprobe.conf) ran at this boot with
# modprobe exit STATUS (0: loaded; 1: no such module, a stock kernel)
# and the unit's result is success either way.
modprobe_unit() {
	st=$(systemctl show -p ExecMainStartTimestampMonotonic -p ExecMainStatus -p Result modprobe@mmtune.service)
	tap_diag "modprobe@mmtune.service: $(echo "$st" | tr '\n' ' ')"
	if echo "$st" | grep -qx 'ExecMainStartTimestampMonotonic=[1-9][0-9]*' &&
		echo "$st" | grep -qx "ExecMainStatus=$1" && echo "$st" | grep -qx 'Result=success'; then
		tap_ok "modprobe@mmtune.service ran at boot: modprobe exit $1, result success"
	else
		tap_not_ok "modprobe@mmtune.service ran at boot: modprobe exit $1, result success"
	fi
}

# no_boot_errors: no line at priority err or above in this boot's journal
# from systemd-modules-load or naming mmtune.
no_boot_errors() {
	# Messages only (-o cat): the host name, in other formats, may say mmtune.
	errs=$(journalctl -b -p err -o cat --no-pager 2>&1)
	ml=$(journalctl -b -p err -t systemd-modules-load -o cat --no-pager 2>&1)
	if [ -z "$ml" ] && ! echo "$errs" | grep -qi mmtune; then
		tap_ok "no error line at boot from systemd-modules-load or about mmtune (journalctl -b -p err)"
	else
		tap_not_ok "no error line at boot from systemd-modules-load or about mmtune (journalctl -b -p err)"
		tap_diag "$(journalctl -b -p err -o short-monotonic --no-pager 2>&1)"
	fi
}

not_ii() { dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '$1 != "ii"'; }

# Every value a profile can set that this host has: THP (the top level,
# khugepaged and, on 6.12, every size's enabled and shmem_enabled), zswap,
# the vm sysctls the profiles tune, and every readable and writable mmtune
# sysfs file (per-size ones included).
snapshot() {
	for f in /sys/kernel/mm/transparent_hugepage/enabled /sys/kernel/mm/transparent_hugepage/defrag \
		/sys/kernel/mm/transparent_hugepage/khugepaged/defrag \
		/sys/kernel/mm/transparent_hugepage/hugepages-*kB/enabled \
		/sys/kernel/mm/transparent_hugepage/hugepages-*kB/shmem_enabled \
		/sys/module/zswap/parameters/* /proc/sys/vm/swappiness /proc/sys/vm/percpu_pagelist_high_fraction \
		/proc/sys/vm/watermark_scale_factor /proc/sys/vm/page-cluster /proc/sys/vm/min_free_kbytes \
		$(find /sys/kernel/mm/mmtune -type f -perm -0600 2>/dev/null | sort); do
		[ -e "$f" ] && printf '%s=%s\n' "$f" "$(cat "$f" 2>&1)"
	done
}

# upgrade_in_place BUMP: "apt-get upgrade" from the repository moves mmtune
# to BUMP and re-applies the profile in place: the journal of
# mmtune.service says Reloaded (no stop, no start), a sampler that reads
# every tuned value in a loop sees no other state than the one before the
# upgrade (a stop/start cycle would show for at least one sample: reading
# every value takes milliseconds, the cycle runs two Python processes),
# the values after it are the ones before, verify exits 0.
upgrade_in_place() {
	before=$(snapshot)
	tap_diag "tuned values: $(echo "$before" | wc -l) files"
	cursor=$(journalctl -n 0 --show-cursor 2>/dev/null | sed -n 's/^-- cursor: //p')
	samples=/run/mmtune-e2e-samples
	: >$samples
	rm -f /run/mmtune-e2e-stop
	(while [ ! -e /run/mmtune-e2e-stop ]; do snapshot | md5sum >>$samples; done) &
	sampler=$!
	out=$(apt-get update 2>&1 && apt-get upgrade -y 2>&1); rc=$?
	touch /run/mmtune-e2e-stop; wait $sampler
	tap_diag "$out"
	got=$(dpkg-query -W -f '${Version}' mmtune)
	if [ $rc -eq 0 ] && [ "$got" = "$1" ] && [ -z "$(not_ii)" ]; then
		tap_ok "apt-get upgrade from the signed repository: mmtune $ver -> $1, every package ii"
	else
		tap_not_ok "apt-get upgrade to mmtune $1 (apt exit $rc, mmtune $got, not ii: $(not_ii))"
	fi
	journal=$(journalctl --after-cursor "$cursor" -u mmtune.service -o cat 2>&1)
	tap_diag "journal of mmtune.service during the upgrade:"; tap_diag "$journal"
	if echo "$journal" | grep -q '^Reloaded ' && ! echo "$journal" | grep -qE '^(Stopping|Stopped|Starting|Started) '; then
		tap_ok "the upgrade reloaded mmtune.service (journal: Reloaded, no Stopping or Starting)"
	else
		tap_not_ok "the upgrade reloaded mmtune.service without stopping it"
	fi
	n=$(wc -l <$samples); distinct=$(sort -u $samples | wc -l)
	want=$(echo "$before" | md5sum)
	if [ "$n" -gt 0 ] && [ "$distinct" = 1 ] && [ "$(head -n 1 $samples)" = "$want" ]; then
		tap_ok "no rollback in between: $n samples of every tuned value during the upgrade, all equal to the values before it"
	else
		tap_not_ok "no rollback in between ($n samples, $distinct distinct states)"
	fi
	after=$(snapshot)
	if [ "$after" = "$before" ]; then
		tap_ok "the $(echo "$after" | wc -l) tuned values after the upgrade are the ones before it"
	else
		tap_not_ok "the tuned values after the upgrade are the ones before it"
		tap_diag "$(printf '%s\n' "$before" >/run/b; printf '%s\n' "$after" | diff /run/b - 2>&1)"
	fi
	out=$(mmtunectl verify 2>&1); rc=$?
	[ $rc -eq 0 ] && tap_ok "mmtunectl verify exits 0 after the upgrade" || { tap_not_ok "mmtunectl verify exits 0 after the upgrade (got $rc)"; tap_diag "$out"; }
}

# stock_kernel_checks STOCK: a stock Debian kernel (release STOCK,
# installed by apt beside ours) booted with mmtune installed: no module,
# mmtunectl says this kernel has no hooks and verify exits 5, the service
# applied the profile's other values, nothing failed.
stock_kernel_checks() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	tap_ok "running the stock Debian kernel $1, installed by apt beside ours"
	[ ! -e /sys/kernel/mm/mmtune ] && ! grep -q '^mmtune ' /proc/modules &&
		tap_ok "no mmtune module on the stock kernel" || tap_not_ok "no mmtune module on the stock kernel"
	out=$(mmtunectl status 2>&1); rc=$?
	tap_diag "mmtunectl status (exit $rc):"; tap_diag "$out"
	echo "$out" | grep -q 'this kernel has no mmtune hooks' &&
		tap_ok "mmtunectl status says this kernel has no mmtune hooks" ||
		tap_not_ok "mmtunectl status says this kernel has no mmtune hooks"
	out=$(mmtunectl verify 2>&1); rc=$?
	tap_diag "mmtunectl verify:"; tap_diag "$out"
	[ $rc -eq 5 ] && tap_ok "mmtunectl verify exits 5 (kernel without mmtune hooks), not 0" ||
		tap_not_ok "mmtunectl verify exits 5 (got $rc)"
	st=$(systemctl is-active mmtune.service 2>&1)
	tap_diag "$(systemctl status mmtune.service --no-pager 2>&1 | head -n 20)"
	[ "$st" = active ] && tap_ok "mmtune.service is active (the profile's other values applied)" ||
		tap_not_ok "mmtune.service is active (got $st)"
	[ -z "$(not_ii)" ] && tap_ok "every package ii" || tap_not_ok "every package ii ($(not_ii))"
	modprobe_unit 1
	no_boot_errors
	no_failed_units
}

# signed_module_checks SIGNER: signatures are enforced (module.sig_enforce=1)
# and mmtune.ko of mmtune-modules-<running release> was loaded at boot,
# signed by SIGNER (the kernel build's key), without an E taint; the same
# module unsigned and signed by a key this kernel does not trust
# ($dir/mmtune-unsigned.ko, mmtune-otherkey.ko, where the host put them)
# are refused and change no taint.
signed_module_checks() {
	_r=$(uname -r)
	se=$(cat /sys/module/module/parameters/sig_enforce 2>&1)
	[ "$se" = Y ] && tap_ok "module signatures are enforced (module.sig_enforce=1: /sys/module/module/parameters/sig_enforce is Y)" ||
		tap_not_ok "module signatures are enforced (sig_enforce: $se)"
	if grep -q '^mmtune ' /proc/modules; then
		tap_ok "mmtune.ko is loaded at boot (modprobe@mmtune.service) although only signed modules may load"
	else
		tap_not_ok "mmtune.ko is loaded at boot"
		tap_diag "$(systemctl status modprobe@mmtune.service --no-pager 2>&1 | tail -n 15)"
		tap_diag "$(dmesg | grep -iE 'mmtune|module|sig' | tail -n 15)"
	fi
	f=$(modinfo -n mmtune 2>&1)
	[ "$f" = "/lib/modules/$_r/extra/mmtune.ko" ] && tap_ok "the loaded module is mmtune-modules-$_r's ($f)" ||
		tap_not_ok "the loaded module is mmtune-modules-$_r's (modinfo -n: $f)"
	s=$(modinfo -F signer mmtune 2>&1)
	[ "$s" = "$1" ] && tap_ok "mmtune.ko's signer is the kernel build's key ('$s')" || tap_not_ok "mmtune.ko's signer is '$1' (got '$s')"
	# Taint: E (8192) = an unsigned module was loaded; O (4096) = out of
	# tree, which every module built outside the kernel tree (M=) sets.
	t=$(cat /proc/sys/kernel/tainted)
	mt=$(cat /sys/module/mmtune/taint 2>&1)
	tap_diag "kernel taint $t, mmtune's taint flags '$mt'"
	if [ -r /sys/module/mmtune/taint ] && [ $((t & 8192)) -eq 0 ] && [ "${mt#*E}" = "$mt" ]; then
		tap_ok "no 'E' taint: the kernel accepted mmtune.ko's signature (module taint '$mt', O = out of tree)"
	else
		tap_not_ok "no 'E' taint (kernel $t, module '$mt')"
	fi
	# Rejected before "already loaded" is checked.
	# The host lists the bad modules it made (expected-bad-modules): one
	# missing from the image is a failure, not a check that did not run.
	_want=" $(cat "$dir/expected-bad-modules" 2>/dev/null) "
	_tried=
	for bad in unsigned otherkey; do
		if [ ! -f "$dir/mmtune-$bad.ko" ]; then
			case "$_want" in *" $bad "*) tap_not_ok "bad input: mmtune-$bad.ko, made by the host, is in the image" ;; esac
			continue
		fi
		_tried=1
		out=$(insmod "$dir/mmtune-$bad.ko" 2>&1); rc=$?
		msg=$(dmesg | grep -E 'Loading of .* is rejected' | tail -n 1)
		if [ $rc -ne 0 ] && echo "$out" | grep -q 'Key was rejected by service'; then
			tap_ok "bad input: mmtune.ko $bad is refused: '$out' / dmesg '$msg'"
		else
			tap_not_ok "bad input: mmtune.ko $bad is refused (insmod exit $rc: $out)"
		fi
	done
	[ -n "$_tried" ] || return 0
	t2=$(cat /proc/sys/kernel/tainted)
	[ "$t2" = "$t" ] && tap_ok "taint unchanged after the refused loads ($t2)" || tap_not_ok "taint unchanged after the refused loads ($t -> $t2)"
}

# status_get KEY...: a value of "mmtunectl status --json" (the document of
# the last status_json call), by its keys.
status_json() { mmtunectl status --json >/run/mmtune-e2e-status.json 2>/dev/null; }
status_get() {
	python3 -c 'import json, sys
d = json.load(open("/run/mmtune-e2e-status.json"))
for k in sys.argv[1:]:
    d = d.get(k) if isinstance(d, dict) else None
print(d)' "$@"
}

# profile_checks PROFILE: mmtune.service applied PROFILE at boot, status
# names it as the profile in force and as the one selected now, it is the
# pick the first apply --auto recorded (/var/lib/mmtune/auto-profile), and
# verify exits 0.
profile_checks() {
	st=$(systemctl is-active mmtune.service 2>&1)
	[ "$st" = active ] && tap_ok "mmtune.service is active" || tap_not_ok "mmtune.service is active (got $st)"
	tap_diag "$(systemctl status mmtune.service --no-pager 2>&1 | head -n 15)"
	status_json
	got="applied $(status_get applied_profile), selected $(status_get selected_profile), recorded $(status_get recorded_profile) in /var/lib/mmtune/auto-profile ($(tail -n 1 /var/lib/mmtune/auto-profile 2>&1)), kernel line $(status_get kernel line)"
	want="applied $1, selected $1, recorded $1 in /var/lib/mmtune/auto-profile ($1), kernel line $(uname -r | cut -d. -f1-2)"
	tap_diag "profile: from $(status_get profile source): $(status_get profile reason)"
	[ "$got" = "$want" ] && tap_ok "the profile in force: $got" || tap_not_ok "the profile in force: got $got; want $want"
	out=$(mmtunectl verify 2>&1); rc=$?
	tap_diag "mmtunectl verify:"; tap_diag "$out"
	[ $rc -eq 0 ] && tap_ok "mmtunectl verify exits 0: $(echo "$out" | tail -n 1)" || tap_not_ok "mmtunectl verify exits 0 (got $rc)"
}
