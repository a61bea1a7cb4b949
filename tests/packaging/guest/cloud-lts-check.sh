#!/bin/sh
# Guest side of tests/packaging/cloud.sh, the Debian 12 LTS path: a
# Debian 12 host on our 6.1 cloud kernel (mmtune and
# mmtune-kernel-cloud-amd64 from the signed local repository, the
# container-host profile picked by the recommend rules and recorded)
# moves to the 6.12 line by installing mmtune-kernel-6.12-cloud-amd64 (a
# new meta package, not an upgrade: packaging/README.md) and rebooting.
# One image booted twice, both with module.sig_enforce=1:
#   6.1   (boot 1) build 6.1's module loaded, the profile in force and
#         recorded, its per-size settings skipped as 6.12-only; then the
#         rule's trigger (/usr/bin/containerd) is removed, so that only
#         the record can keep the profile, and apt installs the 6.12 meta
#         package from the repository (no network)
#   6.12  (boot 2) the 6.12 module loaded, signed by the 6.12 build's key,
#         6.1's module refused; the same profile, from the same record, in
#         force: every value that matched on 6.1 matches with the same
#         value, and the per-size settings skipped on 6.1 now match
# TAP on /dev/ttyS1; run by mmtune-e2e.service after multi-user.target.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh
profile=$(cat $dir/expected-profile)
exp() { cat "$dir/expected-$1"; }
next=$(exp release-next) meta=$(exp meta-next)
state=/var/lib/mmtune-e2e
mkdir -p $state
v() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null; }

# rows FILE: the profile's knobs of the last status_json, as JSON.
rows() {
	python3 -c 'import json, sys
d = json.load(open("/run/mmtune-e2e-status.json"))
json.dump({r["name"]: r for r in d["knobs"] if r["wanted"] is not None}, open(sys.argv[1], "w"), indent=1)' "$1"
}

on_61() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	tap_ok "running our 6.1 cloud kernel $rel (boot 1)"
	signed_module_checks "$(exp signer)"
	modprobe_unit 0
	no_boot_errors
	profile_checks "$profile"
	rows $state/rows-6.1.json
	skipped=$(status_get other_line_knobs)
	tap_diag "skipped as another line's: $skipped"
	case $skipped in
	*thp.hugepages-64kB.enabled*) tap_ok "$profile's per-size settings are skipped on 6.1 as 6.12-only (status --json other_line_knobs)" ;;
	*) tap_not_ok "$profile's per-size settings are skipped on 6.1 (other_line_knobs: $skipped)" ;;
	esac
	cp /var/lib/mmtune/auto-profile $state/auto-profile
	cp "/lib/modules/$rel/extra/mmtune.ko" /root/mmtune-6.1.ko
	# From here the rules pick another profile: only the record keeps it.
	rm -f /usr/bin/containerd
	rec=$(mmtunectl recommend 2>&1)
	tap_diag "mmtunectl recommend without /usr/bin/containerd: $(echo "$rec" | tr '\n' ' ')"
	[ "$(echo "$rec" | head -n 1)" = balanced ] && echo "$rec" | grep -q "^recorded: $profile " &&
		tap_ok "without /usr/bin/containerd the rules pick balanced; the recorded pick is $profile" ||
		tap_not_ok "without /usr/bin/containerd the rules pick balanced, the record says $profile"

	# --- the line change: a new meta package ----------------------------
	out=$(apt-get update 2>&1 && apt-get install -y "$meta" 2>&1); rc=$?
	tap_diag "$(echo "$out" | grep -E '^(W:|E:|Err|Get|Setting up|The following|update-initramfs|mmtune)')"
	got="linux-image-$next $(v "linux-image-$next"), mmtune-modules-$next $(v "mmtune-modules-$next"), $meta $(v "$meta"), mmtune $(v mmtune), linux-image-$rel $(v "linux-image-$rel"), $(exp meta) $(v "$(exp meta)")"
	want="linux-image-$next $(exp kver-next), mmtune-modules-$next $(exp mver-next), $meta $(exp metaver-next), mmtune $ver, linux-image-$rel $(exp kver), $(exp meta) $(exp metaver)"
	if [ $rc -eq 0 ] && [ "$got" = "$want" ] && [ -z "$(not_ii)" ] && ! echo "$out" | grep -qE '^(W: (GPG|Failed|The repository)|E: |Err)'; then
		tap_ok "apt-get install $meta from the signed repository: exit 0, every package ii: $got"
	else
		tap_not_ok "apt-get install $meta (exit $rc; got: $got; want: $want; not ii: $(not_ii))"; tap_diag "$out"
	fi
	[ -f "/boot/vmlinuz-$next" ] && [ -f "/lib/modules/$next/extra/mmtune.ko" ] && grep -q extra/mmtune.ko "/lib/modules/$next/modules.dep" &&
		tap_ok "/boot/vmlinuz-$next and /lib/modules/$next/extra/mmtune.ko installed, in modules.dep" ||
		tap_not_ok "/boot/vmlinuz-$next and /lib/modules/$next/extra/mmtune.ko installed"
	cmp -s /var/lib/mmtune/auto-profile $state/auto-profile && tap_ok "/var/lib/mmtune/auto-profile unchanged by the install" ||
		tap_not_ok "/var/lib/mmtune/auto-profile unchanged by the install"
	no_failed_units
}

on_612() {
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	tap_ok "running our 6.12 cloud kernel $next after the line change (boot 2)"
	signed_module_checks "$(exp signer-next)"
	[ "$(exp signer-next)" != "$(exp signer)" ] && tap_ok "the 6.12 build's key is not the 6.1 build's ('$(exp signer-next)', '$(exp signer)')" ||
		tap_not_ok "the 6.12 build's key differs from the 6.1 build's"
	out=$(insmod /root/mmtune-6.1.ko 2>&1); rc=$?
	if [ $rc -ne 0 ] && echo "$out" | grep -q 'Key was rejected by service'; then
		tap_ok "6.1's mmtune.ko (build 6.1's key) is refused by the 6.12 kernel: '$out'"
	else
		tap_not_ok "6.1's mmtune.ko is refused by the 6.12 kernel (insmod exit $rc: $out)"
	fi
	modprobe_unit 0
	no_boot_errors
	cmp -s /var/lib/mmtune/auto-profile $state/auto-profile && tap_ok "/var/lib/mmtune/auto-profile is the one 6.1 recorded" ||
		tap_not_ok "/var/lib/mmtune/auto-profile is the one 6.1 recorded"
	profile_checks "$profile"
	src=$(status_get profile source)
	[ "$src" = recorded ] && tap_ok "6.12's first apply took $profile from the record, not from the rules (which pick balanced now)" ||
		tap_not_ok "6.12's first apply took $profile from the record (source: $src)"
	rows $state/rows-6.12.json
	out=$(python3 - $state/rows-6.1.json $state/rows-6.12.json <<'PY'
import json, sys
old, new = (json.load(open(p)) for p in sys.argv[1:3])
kept = per_size = 0
bad = []
for name, r in sorted(old.items()):
    n = new.get(name)
    if r["state"] == "match":
        if n is None or n["state"] == "skipped" and "6.1" in n.get("kernel_lines", []):
            continue    # a 6.1-only knob (swap_slots): not on 6.12
        if n["state"] != "match" or n["live"] != r["live"]:
            bad.append("%s: 6.1 %s, 6.12 %s %s" % (name, r["live"], n["state"], n["live"]))
        kept += 1
    elif r["state"] == "skipped" and "6.12" in r.get("kernel_lines", []):
        if n is None or n["state"] != "match":
            bad.append("%s: skipped on 6.1, on 6.12 %s" % (name, n and n["state"]))
        per_size += 1
print("%d values kept, %d per-size settings in force" % (kept, per_size))
for b in bad:
    print(b)
sys.exit(1 if bad or not kept or not per_size else 0)
PY
); rc=$?
	tap_diag "$out"
	[ $rc -eq 0 ] && tap_ok "the profile kept across the line change: $(echo "$out" | head -n 1) (their 6.1 values, now applied)" ||
		tap_not_ok "the profile kept across the line change"
	thp=/sys/kernel/mm/transparent_hugepage
	got=$(cat $thp/hugepages-64kB/enabled)
	[ "$got" = "[always] inherit madvise never" ] && tap_ok "hugepages-64kB/enabled is $got ($profile's, 6.12 only)" ||
		tap_not_ok "hugepages-64kB/enabled is always (got $got)"
	no_failed_units
}

case "$(uname -r)" in
"$rel") on_61 ;;
"$next") on_612 ;;
*) tap_not_ok "booted $rel or $next (got $(uname -r))" ;;
esac
echo "# e2e: done" >&3
