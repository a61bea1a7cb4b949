#!/bin/sh
# Guest side of the repository test (tests/packaging/full.sh,
# repo_upgrade_checks): the operator quick start and a kernel rebuild, one
# image booted four times (stock kernel, build 1, build 2, build 1 again).
# The guest has no network device: the
# repositories ("make repo" output, copied into the image by the host) are
# served by python3 -m http.server on 127.0.0.1 inside the guest. Build 2
# is a release of its own (rel2), installed beside build 1 (rel1).
#   /srv/www/published -> repo1 (kernel build 1) or repo2 (builds 1 and 2)
#   phase install  (stock Debian kernel) the quick start: fetch the key,
#                  add the source, apt install mmtune mmtune-kernel-<flavour>:
#                  the kernel, its module and mmtune at build 1's versions
#   phase build1   (our kernel, build 1, module.sig_enforce=1) mmtune.ko
#                  loaded, signed by build 1's key, mmtunectl status; then
#                  build 2 is published and "apt-get upgrade" moves the
#                  meta package to build 2's kernel and module, installed
#                  beside build 1's (still ii, /lib/modules/<rel1>
#                  unchanged); overlay, not loaded before, loads from
#                  /lib/modules/<rel1> under sig_enforce
#   phase build2   (our kernel, build 2, module.sig_enforce=1) build 2's
#                  module loaded, signed by build 2's key; build 1's module
#                  is refused
#   phase fallback (build 1 booted again) its module and overlay load
# TAP on /dev/ttyS1; run by mmtune-e2e.service after multi-user.target.
# shellcheck source=tests/packaging/guest/e2e-lib.sh
. /usr/local/lib/mmtune-e2e/e2e-lib.sh
meta=$(cat $dir/expected-meta)
state=/var/lib/mmtune-e2e
mkdir -p $state
phase=$(cat $state/phase 2>/dev/null || echo install)
# Per build N: the kernel package version, the module and meta package
# versions, the signer's common name.
exp() { cat "$dir/expected-$1"; }
rel1=$(exp rel1)

not_ii() { dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' | awk '$1 != "ii"'; }
v() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null; }

serve() {
	python3 -m http.server 8080 --bind 127.0.0.1 --directory /srv/www >/run/http.log 2>&1 &
	i=0
	while [ $i -lt 60 ]; do
		python3 -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:8080/")' 2>/dev/null && return 0
		sleep 1; i=$((i + 1))
	done
	tap_not_ok "http.server on 127.0.0.1:8080 answers"
}

# versions N [META]: build N's kernel and module are installed (ii), and
# the meta package at build META's version (default N).
versions() {
	r=$(exp rel$1) m=${2:-$1}
	got="linux-image-$r $(v linux-image-$r), mmtune-modules-$r $(v mmtune-modules-$r), $meta $(v $meta)"
	want="linux-image-$r $(exp kver$1), mmtune-modules-$r $(exp mver$1), $meta $(exp metaver$m)"
	if [ "$got" = "$want" ] && [ -z "$(not_ii)" ]; then
		tap_ok "dpkg: build $1 installed as one: $got; every package ii"
	else
		tap_not_ok "dpkg: build $1 installed as one (got: $got; want: $want; not ii: $(not_ii))"
	fi
}

# modtree: what /lib/modules/<rel1> holds, file by file.
modtree() { (cd /lib/modules/$rel1 && find . -type f -exec sha256sum {} + | LC_ALL=C sort -k2); }

# ondemand: overlay, not loaded so far, loads from the running build's
# /lib/modules (signed by the key this kernel trusts).
ondemand() {
	r=$(uname -r)
	if grep -q '^overlay ' /proc/modules; then tap_not_ok "overlay is not loaded before the check"; return; fi
	out=$(modprobe overlay 2>&1); rc=$?
	f=$(modinfo -n overlay 2>&1)
	if [ $rc -eq 0 ] && grep -q '^overlay ' /proc/modules && [ "${f#/lib/modules/$r/}" != "$f" ]; then
		tap_ok "modprobe overlay (not loaded before) on $r: loaded from $f under sig_enforce $1"
	else
		tap_not_ok "modprobe overlay on $r $1 (exit $rc: $out; modinfo -n: $f)"
		tap_diag "$(dmesg | grep -iE 'overlay|module|key' | tail -n 10)"
	fi
}

# module N: running build N's kernel, signatures enforced, its module loaded.
module() {
	rel=$(exp rel$1)
	[ "$(uname -r)" = "$rel" ] && tap_ok "running build $1: $rel ($(uname -v))" || tap_not_ok "running build $1: $rel (got $(uname -r))"
	se=$(cat /sys/module/module/parameters/sig_enforce 2>&1)
	[ "$se" = Y ] && tap_ok "module signatures enforced (module.sig_enforce=1)" || tap_not_ok "module signatures enforced (sig_enforce: $se)"
	f=$(modinfo -n mmtune 2>&1) s=$(modinfo -F signer mmtune 2>&1)
	if grep -q '^mmtune ' /proc/modules && [ "$f" = "/lib/modules/$rel/extra/mmtune.ko" ]; then
		tap_ok "mmtune.ko of mmtune-modules-$rel is loaded (/proc/modules) under sig_enforce"
	else
		tap_not_ok "mmtune.ko of mmtune-modules-$rel is loaded (modinfo -n: $f)"
		tap_diag "$(dmesg | grep -iE 'mmtune|module|key' | tail -n 10)"
	fi
	[ "$s" = "$(exp signer$1)" ] && tap_ok "its signer is build $1's key ('$s')" ||
		tap_not_ok "its signer is build $1's key '$(exp signer$1)' (got '$s')"
	out=$(mmtunectl status 2>&1); rc=$?
	tap_diag "mmtunectl status:"; tap_diag "$out"
	[ $rc -eq 0 ] && tap_ok "mmtunectl status exits 0" || tap_not_ok "mmtunectl status exits 0 (got $rc)"
}

case "$phase" in
install)
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	tap_diag "network interfaces: $(ls /sys/class/net | tr '\n' ' ')(no other: nothing leaves the guest)"
	ln -sfn repo1 /srv/www/published
	serve
	# The quick start (packaging/README.md), as an operator types it.
	out=$(
		set -e
		mkdir -p /etc/apt/keyrings
		python3 -c 'import sys, urllib.request; sys.stdout.buffer.write(urllib.request.urlopen(sys.argv[1]).read())' \
			http://127.0.0.1:8080/published/mmtune-archive-keyring.gpg >/etc/apt/keyrings/mmtune.gpg
		echo "deb [signed-by=/etc/apt/keyrings/mmtune.gpg] http://127.0.0.1:8080/published/apt bookworm main" \
			>/etc/apt/sources.list.d/mmtune.list
		apt-get update 2>&1 | sed 's/^/update: /'
		apt-get install -y mmtune "$meta" 2>&1
		systemctl enable --now mmtune.service 2>&1
	); rc=$?
	tap_diag "$(echo "$out" | grep -E '^(update: |W:|E:|Setting up|update-initramfs)')"
	# apt's own warnings (signatures, the source) are apt-get update's;
	# the install's W: lines are the kernel hooks' (initramfs-tools: no zstd).
	if [ $rc -eq 0 ] && ! echo "$out" | grep -qE '^(update: (W|E|Err)|E: )'; then
		tap_ok "quick start: key and source added, apt-get update (no warning), apt-get install mmtune $meta, systemctl enable --now mmtune.service (exit 0)"
	else
		tap_not_ok "quick start: apt-get install mmtune $meta (exit $rc)"; tap_diag "$out"
	fi
	tap_diag "$(apt-cache policy "$meta" linux-image-$rel1 2>&1)"
	versions 1
	[ "$(v mmtune)" = "$ver" ] && tap_ok "mmtune $ver installed" || tap_not_ok "mmtune $ver installed (got $(v mmtune))"
	[ -f /boot/vmlinuz-$rel1 ] && tap_ok "/boot/vmlinuz-$rel1 installed" || tap_not_ok "/boot/vmlinuz-$rel1 installed"
	echo build1 >$state/phase
	;;
build1)
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	module 1
	modtree >$state/modules-rel1
	# The operator publishes build 2 beside build 1.
	ln -sfn repo2 /srv/www/published
	serve
	# --with-new-pkgs: what "apt upgrade" does; build 2's packages are new
	# names (its own release).
	out=$(apt-get update 2>&1 && apt-get upgrade --with-new-pkgs -y 2>&1); rc=$?
	tap_diag "$(echo "$out" | grep -E '^(Get|Err|W:|E:|Setting up|Unpacking|update-initramfs|The following)' )"
	if [ $rc -eq 0 ] && ! echo "$out" | grep -qE '^(W: (GPG|Failed|The repository|Skipping)|E: |Err)|kept back'; then
		tap_ok "apt-get upgrade --with-new-pkgs (apt upgrade) with build 2 published: exit 0, nothing kept back"
	else
		tap_not_ok "apt-get upgrade with build 2 published (exit $rc)"; tap_diag "$out"
	fi
	versions 2
	versions 1 2
	if modtree | cmp -s - $state/modules-rel1; then
		tap_ok "/lib/modules/$rel1 of the running build 1 unchanged by the upgrade ($(wc -l <$state/modules-rel1) files, sha256)"
	else
		tap_not_ok "/lib/modules/$rel1 unchanged by the upgrade"; tap_diag "$(modtree | diff $state/modules-rel1 - | head -n 20)"
	fi
	ondemand "after the upgrade to build 2, before the reboot"
	echo build2 >$state/phase
	;;
build2)
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	module 2
	out=$(insmod /lib/modules/$rel1/extra/mmtune.ko 2>&1); rc=$?
	if [ $rc -ne 0 ] && echo "$out" | grep -q 'Key was rejected by service'; then
		tap_ok "build 1's mmtune.ko is refused by build 2's kernel: '$out' (why the module pins its kernel build)"
	else
		tap_not_ok "build 1's mmtune.ko is refused by build 2's kernel (insmod exit $rc: $out)"
	fi
	no_failed_units
	echo fallback >$state/phase
	;;
fallback)
	tap_diag "booted $(uname -r) in $(cut -d' ' -f1 /proc/uptime)s"
	module 1
	ondemand "on the previous build, booted again"
	versions 1 2
	no_failed_units
	echo finished >$state/phase
	;;
*) tap_not_ok "unknown phase '$phase'" ;;
esac
echo "# e2e: done" >&3
