#!/bin/bash
# The mmtune .debs and make-repo.sh against Debian 12 and 13, no kernel
# built or booted (TAP):
#   - Debian 13's lintian (2.122) on the .debs and the .dsc: no error or
#     warning (units and the udev rule under /usr/lib);
#   - a stock Debian 12 cloud base (systemd, udev, python3; rootfs.sh
#     bookworm cloud): installing mmtune pulls in nothing but mmtune (no
#     DKMS, compiler or headers), leaves mmtune.service disabled and the
#     kernel knobs untouched; an upgrade from the /lib layout keeps the
#     unit files and the admin's enablement;
#   - make-repo.sh: one tree with dists/bookworm and dists/trixie and
#     mmtune.pref, which apt in a Debian 12 and a Debian 13 root both use
#     through one URL; a passphrase-protected key and a package carrying a
#     private key are refused with a clear error, nothing (no .tmp) left.
#
#   tests/packaging/suites.sh     (after make packages; roots cached by
#                                  rootfs.sh, about 3 minutes the first time)
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo" || exit 2
# shellcheck source=tests/packaging/lib.sh
. tests/packaging/lib.sh

ver=$(packaging/version.sh)
deb_tools=build/packaging/out/deb/mmtune_${ver}_all.deb
deb_dkms=build/packaging/out/deb/mmtune-dkms_${ver}_all.deb
w=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-suites.XXXXXX")
trap 'rm -rf "$w"' EXIT
start=$(date +%s)
tap_header

if [ ! -f "$deb_tools" ] || [ ! -f "$deb_dkms" ]; then echo "no packages: make packages first" >&2; exit 2; fi
lint_root=$(tests/packaging/rootfs.sh trixie lintian) || exit 1
cloud_root=$(tests/packaging/rootfs.sh bookworm cloud) || exit 1

# --- Debian 13's lintian ------------------------------------------------------
trixie_lintian() {
	local r=$w/lint out
	copy_root "$lint_root" "$r"
	mkdir -p "$r/tmp/p"
	cp "$deb_tools" "$deb_dkms" build/packaging/out/source/mmtune_"$ver".{dsc,tar.xz} "$r/tmp/p/"
	out=$(in_root "$r" lintian --pedantic --display-info --show-overrides \
		/tmp/p/"$(basename "$deb_tools")" /tmp/p/"$(basename "$deb_dkms")" /tmp/p/mmtune_"$ver".dsc 2>&1 | grep -v 'root privileges')
	in_root "$r" lintian --version
	echo "$out"
	! grep -qE '^[EW]: ' <<<"$out"
}
check "Debian 13 lintian: the .debs and the .dsc have no error or warning (no aliased-location: units and udev rule under /usr/lib)" trixie_lintian

# --- a stock Debian 12 cloud base ------------------------------------------
r=$w/cloud
copy_root "$cloud_root" "$r"
cp "$deb_tools" "$r/var/tmp/"
in_root "$r" apt-get update -qq >/dev/null 2>&1
simulate() {
	local out inst
	out=$(in_root "$r" apt-get install --simulate -q "/var/tmp/$(basename "$deb_tools")" 2>&1) || { echo "$out"; return 1; }
	inst=$(sed -n 's/^Inst \([^ ]*\) .*/\1/p' <<<"$out")
	echo "apt-get install --simulate ./$(basename "$deb_tools"): $(wc -l <<<"$inst") package(s): $(tr '\n' ' ' <<<"$inst")"
	[ "$inst" = mmtune ]
}
check "Debian 12 cloud base: apt-get install --simulate of mmtune installs mmtune alone (no mmtune-dkms, dkms, gcc or headers: Suggests, not Recommends)" simulate

# knobs: the THP and zswap values the kernel has now (the chroot shares
# the host's /sys).
knobs() { cat /sys/kernel/mm/transparent_hugepage/enabled /sys/module/zswap/parameters/enabled 2>/dev/null; }
fresh_install() {
	local before after rc=0 out
	before=$(knobs)
	out=$(in_root "$r" dpkg -i "/var/tmp/$(basename "$deb_tools")" 2>&1) || { echo "$out"; return 1; }
	after=$(knobs)
	echo "is-enabled: mmtune.service $(in_root "$r" systemctl is-enabled mmtune.service 2>&1), mmtune-metrics.timer $(in_root "$r" systemctl is-enabled mmtune-metrics.timer 2>&1)"
	[ "$(in_root "$r" systemctl is-enabled mmtune.service 2>&1)" = disabled ] || rc=1
	[ "$(in_root "$r" systemctl is-enabled mmtune-metrics.timer 2>&1)" = enabled ] || rc=1
	[ ! -e "$r/etc/systemd/system/sysinit.target.wants/mmtune.service" ] || { echo "sysinit.target.wants/mmtune.service exists"; rc=1; }
	[ "$before" = "$after" ] || { echo "knobs changed: $before -> $after"; rc=1; }
	[ ! -e "$r/var/lib/mmtune/auto-profile" ] || { echo "a profile was picked"; rc=1; }
	return $rc
}
check "Debian 12 cloud base: dpkg -i mmtune: mmtune.service disabled (no sysinit.target.wants link), the metrics timer enabled, THP and zswap unchanged, no profile picked" fresh_install

# An mmtune of the /lib layout (this package, units and udev rule moved
# back to /lib, version lowered) into ROOT/var/tmp, enabled by the admin,
# upgraded to this one.
old_layout_deb() {
	local x=$w/old
	rm -rf "$x"
	dpkg-deb -R "$deb_tools" "$x"
	mkdir -p "$x/lib"
	mv "$x/usr/lib/systemd" "$x/usr/lib/udev" "$x/lib/"
	sed -i 's|  usr/lib/systemd/|  lib/systemd/|; s|  usr/lib/udev/|  lib/udev/|' "$x/DEBIAN/md5sums"
	sed -i "s/^Version: .*/Version: 0.0.1/" "$x/DEBIAN/control"
	dpkg-deb -b "$x" "$1/var/tmp/mmtune_0.0.1_all.deb" >/dev/null
}
upgrade_from_lib() {
	local u=$w/upgrade rc=0 out f
	copy_root "$cloud_root" "$u"
	old_layout_deb "$u"
	cp "$deb_tools" "$u/var/tmp/"
	out=$(in_root "$u" sh -c "dpkg -i /var/tmp/mmtune_0.0.1_all.deb && systemctl enable mmtune.service &&
		dpkg -i /var/tmp/$(basename "$deb_tools")" 2>&1) || { echo "$out"; return 1; }
	for f in mmtune.service mmtune-reapply.service mmtune.service.d/10-modprobe.conf; do
		if [ -s "$u/usr/lib/systemd/system/$f" ]; then echo "present: /usr/lib/systemd/system/$f"; else echo "lost: $f"; rc=1; fi
	done
	[ -s "$u/usr/lib/udev/rules.d/60-mmtune.rules" ] || { echo "lost: 60-mmtune.rules"; rc=1; }
	echo "after the upgrade: mmtune.service $(in_root "$u" systemctl is-enabled mmtune.service 2>&1)"
	[ "$(in_root "$u" systemctl is-enabled mmtune.service 2>&1)" = enabled ] || rc=1
	[ "$(in_root "$u" dpkg-query -W -f "\${Version}" mmtune)" = "$ver" ] || rc=1
	return $rc
}
check "Debian 12 cloud base (merged /usr): upgrade from an mmtune with units under /lib, enabled by the admin: unit files and udev rule present under /usr/lib, mmtune.service still enabled" upgrade_from_lib

# --- make-repo.sh: both suites, one URL -------------------------------------
mkdir -m 700 "$w/gpg" "$w/gpg-pw"
gen_key() { GNUPGHOME=$1 gpg -q --batch --pinentry-mode loopback --passphrase "$2" --quick-gen-key "$3" rsa2048 sign never 2>/dev/null; }
gen_key "$w/gpg" '' 'suites test repository <r@localhost>'
make_repo() { GNUPGHOME=$w/gpg MMTUNE_REPO_KEY='suites test repository' packaging/repo/make-repo.sh "$@"; }

repo_both() {
	local out=$w/repo s rc=0
	make_repo --out "$out" build/packaging/out/deb build/packaging/out/rpm 2>&1 | grep -E '^repo: (apt|rpm|private|done)' || return 1
	for s in bookworm trixie; do
		if ! { grep -qx "Suite: $s" "$out/apt/dists/$s/Release" && grep -qx 'Origin: mmtune' "$out/apt/dists/$s/Release" &&
			gpgv --keyring "$out/mmtune-archive-keyring.gpg" "$out/apt/dists/$s/InRelease" 2>/dev/null; }; then
			echo "dists/$s: no Release for $s or InRelease does not verify"; rc=1
		fi
		[ "$(grep -c "^Filename: pool/main/mmtune" "$out/apt/dists/$s/main/binary-amd64/Packages")" = 2 ] ||
			{ echo "dists/$s does not list both mmtune packages from pool/main"; rc=1; }
	done
	cmp "$out/mmtune.pref" packaging/repo/mmtune.pref && echo "mmtune.pref published" || rc=1
	return $rc
}
check "make-repo.sh: one tree, dists/bookworm and dists/trixie (Suite, Origin mmtune, InRelease verifies) over one pool/main, mmtune.pref published beside" repo_both

# apt_from_repo SUITE ROOT: the repository through one file: URL and
# mmtune.pref as published: apt-get update, mmtune's candidate is ours.
apt_from_repo() {
	local s=$1 x=$w/apt-$1 out
	copy_root "$2" "$x"
	mkdir -p "$x/srv" "$x/etc/apt/keyrings"
	cp -a "$w/repo" "$x/srv/mmtune"
	cp "$w/repo/mmtune-archive-keyring.gpg" "$x/etc/apt/keyrings/mmtune.gpg"
	cp "$w/repo/mmtune.pref" "$x/etc/apt/preferences.d/mmtune.pref"
	echo "deb [signed-by=/etc/apt/keyrings/mmtune.gpg] file:/srv/mmtune/apt $s main" >"$x/etc/apt/sources.list.d/mmtune.list"
	out=$(in_root "$x" sh -c 'apt-get update 2>&1 && apt-cache policy mmtune' 2>&1) || { echo "$out"; return 1; }
	echo "$out" | grep -E 'mmtune|Candidate|500|file:'
	grep -qE '^(W|E|Err):' <<<"$out" && { echo "apt warned"; return 1; }
	grep -q "Candidate: $ver" <<<"$out" && grep -q "file:/srv/mmtune/apt $s/main" <<<"$out"
}
check "apt on Debian 12 (bookworm) with the repository's URL and mmtune.pref: update clean, mmtune $ver the candidate from dists/bookworm" \
	apt_from_repo bookworm "$cloud_root"
check "apt on Debian 13 (trixie) with the same URL and mmtune.pref: update clean, mmtune $ver the candidate from dists/trixie" \
	apt_from_repo trixie "$lint_root"

passphrase_key() {
	local out rc=0
	gen_key "$w/gpg-pw" secret 'suites passphrase key <p@localhost>'
	gpgconf --homedir "$w/gpg-pw" --kill gpg-agent
	out=$(GNUPGHOME=$w/gpg-pw MMTUNE_REPO_KEY='suites passphrase key' packaging/repo/make-repo.sh --out "$w/repo-pw" build/packaging/out/deb 2>&1) && rc=1
	echo "$out"
	grep -q "error: cannot sign with 'suites passphrase key' without a prompt: the key has a passphrase" <<<"$out" || rc=1
	if [ -e "$w/repo-pw" ] || [ -e "$w/repo-pw.tmp" ]; then echo "left: $(ls -d "$w"/repo-pw*)"; rc=1; fi
	# gpg removes its -o file when signing fails: never /dev/null.
	[ -c /dev/null ] || { echo "/dev/null is no longer a device"; rc=1; }
	return $rc
}
check "bad input: make-repo.sh with a passphrase-protected key (no agent holds it): a clear error, no prompt, neither the repository nor .tmp left, /dev/null still a device" passphrase_key

leaked_key() {
	local t=$w/leak out rc=0
	mkdir -p "$t/DEBIAN" "$t/usr/share/mmtune-leak"
	printf 'Package: mmtune-leak\nVersion: 1\nArchitecture: all\nMaintainer: t <t@localhost>\nDescription: t\n' >"$t/DEBIAN/control"
	openssl genpkey -algorithm ed25519 -outform DER -out "$t/usr/share/mmtune-leak/data.bin"
	dpkg-deb --root-owner-group -b "$t" "$w/mmtune-leak_1_all.deb" >/dev/null
	out=$(make_repo --out "$w/repo-leak" build/packaging/out/deb "$w/mmtune-leak_1_all.deb" 2>&1) && rc=1
	grep -E 'PRIVATE|error' <<<"$out"
	grep -q 'PRIVATE KEY: /usr/share/mmtune-leak/data.bin: a DER PKCS#8 private key' <<<"$out" || rc=1
	if [ -e "$w/repo-leak" ] || [ -e "$w/repo-leak.tmp" ]; then echo "something was left"; rc=1; fi
	return $rc
}
check "bad input: make-repo.sh refuses a .deb carrying a DER private key under an innocent name: named, nothing published, no .tmp" leaked_key

tap_plan "$tap_n"
echo "# suites in $(( $(date +%s) - start ))s"
echo "packaging suites: $((tap_n - tap_failed - tap_skipped)) passed, $tap_failed failed, $tap_skipped skipped"
[ "$tap_failed" -eq 0 ]
