#!/bin/bash
# Unit test of packaging/dkms/mmtune-dkms-kernel (the decision behind the
# mmtune-dkms kernel hooks) on fake kernels under a scratch root, with a
# fake dkms that records its calls: the decision and its line per kernel,
# one line per kernel and state however often the hooks run, a failed
# build retried only when the kernel or the sources change (counted in the
# log), and "status" for every kernel. Part of the quick packaging suite.
# Prints what failed; exit 0 when every case passes.
set -uo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
helper=$repo/packaging/dkms/mmtune-dkms-kernel
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
root=$t/root fake=$t/fake
mkdir -p "$root/usr/src/mmtune-9.9" "$root/boot" "$fake/bin"
export MMTUNE_DKMS_ROOT=$root MMTUNE_DKMS_VERSION=9.9 FAKE=$fake
export PATH=$fake/bin:$PATH

# Fake dkms: "status" prints $FAKE/status-KVER, "install" exits with
# $FAKE/rc-KVER (default 0) and, on success, makes "status" say installed;
# every call is logged.
cat >"$fake/bin/dkms" <<'SH'
#!/bin/sh
echo "dkms $*" >>"$FAKE/calls"
k=
prev=
for a in "$@"; do [ "$prev" = -k ] && k=$a; prev=$a; done
case "$1" in
status) [ -n "$k" ] && cat "$FAKE/status-$k" 2>/dev/null; exit 0 ;;
install)
	echo "fake dkms output for $k"
	rc=$(cat "$FAKE/rc-$k" 2>/dev/null || echo 0)
	[ "$rc" = 0 ] && echo "mmtune/9.9, $k, x86_64: installed" >"$FAKE/status-$k"
	exit "$rc" ;;
esac
exit 0
SH
chmod +x "$fake/bin/dkms"

# kernel NAME headers|noheaders hooks|nohooks
kernel() {
	local k=$1 cfg
	[ "$3" = hooks ] && cfg='CONFIG_MMTUNE_HOOKS=y' || cfg='# CONFIG_MMTUNE_HOOKS is not set'
	mkdir -p "$root/lib/modules/$k"
	echo "$cfg" >"$root/boot/config-$k"
	if [ "$2" = headers ]; then
		mkdir -p "$root/lib/modules/$k/build/include"
		echo "$cfg" >"$root/lib/modules/$k/build/.config"
	fi
}

fails=0 n=0
# expect NAME WANT_RC WANT_OUTPUT_REGEX_OR_EMPTY WANT_INSTALL_CALL(yes|no) -- ARGS
expect() {
	local name=$1 want_rc=$2 want_out=$3 want_call=$4 out rc=0 calls; shift 5
	n=$((n + 1))
	: >"$fake/calls"
	out=$("$helper" "$@" 2>&1) || rc=$?
	calls=$(grep -c '^dkms install' "$fake/calls")
	local bad=
	[ "$rc" = "$want_rc" ] || bad="exit $rc, want $want_rc"
	if [ -z "$want_out" ]; then
		[ -z "$out" ] || bad="$bad; output not empty"
	else
		[ "$(grep -c . <<<"$out")" = 1 ] || bad="$bad; not one line"
		grep -qE "$want_out" <<<"$out" || bad="$bad; output does not match /$want_out/"
	fi
	case $want_call in
	yes) [ "$calls" = 1 ] || bad="$bad; dkms install called $calls times, want 1" ;;
	no) [ "$calls" = 0 ] || bad="$bad; dkms install called $calls times, want 0" ;;
	esac
	if [ -n "$bad" ]; then
		fails=$((fails + 1)); echo "FAIL $name: ${bad#; }"; echo "  output: $out"
	else
		echo "ok   $name: ${out:-(silent)}"
	fi
}

kernel 6.1.0-56-amd64 headers nohooks
kernel 6.1.0-57-amd64 noheaders nohooks
kernel 6.1.99-mmtune noheaders hooks
kernel 6.1.98-mmtune headers hooks
kernel 6.1.97-mmtune headers hooks; echo 77 >"$fake/rc-6.1.97-mmtune"
kernel 6.1.96-mmtune headers hooks; echo 10 >"$fake/rc-6.1.96-mmtune"
kernel 6.1.95-mmtune headers hooks; mkdir -p "$root/lib/modules/6.1.95-mmtune/extra"; : >"$root/lib/modules/6.1.95-mmtune/extra/mmtune.ko"
kernel 6.1.94-mmtune headers hooks; echo "mmtune/9.9, 6.1.94-mmtune, x86_64: installed" >"$fake/status-6.1.94-mmtune"

expect "stock kernel with headers" 0 '^mmtune-dkms: 6\.1\.0-56-amd64 has no mmtune hooks \(CONFIG_MMTUNE_HOOKS is not set\), mmtune\.ko skipped' no -- install 6.1.0-56-amd64
expect "stock kernel, image only (/boot/config)" 0 '^mmtune-dkms: 6\.1\.0-57-amd64 has no mmtune hooks' no -- install 6.1.0-57-amd64
expect "patched kernel, headers not yet there" 0 '^mmtune-dkms: 6\.1\.99-mmtune: no headers yet' no -- install 6.1.99-mmtune
expect "patched kernel with headers: built" 0 '^mmtune-dkms: 6\.1\.98-mmtune: built, signed and installed mmtune 9\.9 with DKMS$' yes -- install 6.1.98-mmtune
expect "dkms exits 77: a skip, not an error" 0 '^mmtune-dkms: 6\.1\.97-mmtune: dkms declined mmtune 9\.9 \(BUILD_EXCLUSIVE\), skipped' yes -- install 6.1.97-mmtune
expect "dkms build fails: one line, exit 0" 0 '^mmtune-dkms: 6\.1\.96-mmtune: building mmtune 9\.9 FAILED \(dkms exit 10; see .*/var/log/mmtune-dkms\.log' yes -- install 6.1.96-mmtune
expect "prebuilt mmtune-modules module: DKMS not used" 0 '^mmtune-dkms: 6\.1\.95-mmtune has the prebuilt mmtune\.ko \(mmtune-modules-6\.1\.95-mmtune\)' no -- install 6.1.95-mmtune
expect "already installed" 0 '^mmtune-dkms: 6\.1\.94-mmtune: mmtune 9\.9 already installed with DKMS$' no -- install 6.1.94-mmtune
expect "usage error" 2 'usage' no -- install

# The dkms output went to the log, not to the terminal.
n=$((n + 1))
if grep -q 'fake dkms output for 6.1.96-mmtune' "$root/var/log/mmtune-dkms.log"; then
	echo "ok   dkms output is in /var/log/mmtune-dkms.log"
else
	fails=$((fails + 1)); echo "FAIL dkms output is not in the log"
fi

# A second hook run for the same kernel (header_postinst.d after
# postinst.d, the /usr/src trigger): no second line, no second build.
expect "stock kernel, headers hook after the image hook: silent" 0 '' no -- install 6.1.0-56-amd64
expect "built kernel, trigger after the hook: silent" 0 '' no -- install 6.1.98-mmtune
expect "failed build, second hook run: silent, not retried" 0 '' no -- install 6.1.96-mmtune

# attempts KVER: build attempts for KVER in the log.
attempts() { grep -c "^== .* dkms install -m mmtune -v 9.9 -k $1\$" "$root/var/log/mmtune-dkms.log"; }
# case_ok NAME STATUS OUTPUT
case_ok() {
	n=$((n + 1))
	if [ "$2" = 0 ]; then echo "ok   $1"; else fails=$((fails + 1)); echo "FAIL $1"; printf "  | %s\n" "$3"; fi
}

# "all" (package configuration): one line for every installed kernel,
# headers or not (6.1.99-mmtune waits for its headers).
: >"$fake/calls"
out=$("$helper" all 2>&1); rc=$?
[ $rc -eq 0 ] && [ "$(grep -c '^mmtune-dkms: ' <<<"$out")" = 8 ] && [ "$(grep -c . <<<"$out")" = 8 ] &&
	grep -q '^mmtune-dkms: 6\.1\.99-mmtune: no headers yet' <<<"$out" &&
	[ "$(grep -c '^dkms install' "$fake/calls")" = 0 ]
case_ok "all: one line for each of the 8 kernels (the one without headers too), no build repeated" $? "$out"

# Triggers (--changed) three times: nothing changed, nothing printed, the
# failed build not retried: still one attempt in the log.
out=$(for _ in 1 2 3; do "$helper" all --changed; done 2>&1); rc=$?
[ $rc -eq 0 ] && [ -z "$out" ] && [ "$(attempts 6.1.96-mmtune)" = 1 ] && [ "$(attempts 6.1.97-mmtune)" = 1 ]
case_ok "all --changed x3: silent; the failed (and the declined) build attempted once in the log" $? "$out; attempts: $(attempts 6.1.96-mmtune)"
out=$("$helper" all --quiet-skip 2>&1)
[ -z "$out" ] && [ "$(attempts 6.1.96-mmtune)" = 1 ]
case_ok "all --quiet-skip (0.1.0's name for --changed): the same" $? "$out"

# The kernel changes (headers reinstalled: new files): retried once.
rm "$root/lib/modules/6.1.96-mmtune/build/.config"
echo 'CONFIG_MMTUNE_HOOKS=y' >"$root/lib/modules/6.1.96-mmtune/build/.config"
out=$("$helper" all --changed 2>&1; "$helper" all --changed 2>&1)
[ "$(attempts 6.1.96-mmtune)" = 2 ] && [ "$(grep -c . <<<"$out")" = 1 ] && grep -q '^mmtune-dkms: 6\.1\.96-mmtune: building mmtune 9\.9 FAILED' <<<"$out"
case_ok "headers of the failed kernel reinstalled: retried once (2 attempts in the log), one FAILED line" $? "$out; attempts: $(attempts 6.1.96-mmtune)"
# mmtune's sources change (mmtune-dkms reinstalled or upgraded): retried once.
rm "$root/usr/src/mmtune-9.9/dkms.conf" 2>/dev/null; : >"$root/usr/src/mmtune-9.9/dkms.conf"
"$helper" install 6.1.0-56-amd64 2>/dev/null; "$helper" all --changed 2>/dev/null; "$helper" all --changed 2>/dev/null
[ "$(attempts 6.1.96-mmtune)" = 3 ]
case_ok "mmtune sources replaced: retried once (3 attempts)" $? "attempts: $(attempts 6.1.96-mmtune)"
# The operator retries by hand.
out=$("$helper" install 6.1.96-mmtune --retry 2>&1)
[ "$(attempts 6.1.96-mmtune)" = 4 ] && grep -q FAILED <<<"$out"
case_ok "install KVER --retry: retried (4 attempts)" $? "$out"

# The stock kernel's image reinstalled: one line again (a new installation).
rm "$root/boot/config-6.1.0-56-amd64"; echo '# CONFIG_MMTUNE_HOOKS is not set' >"$root/boot/config-6.1.0-56-amd64"
out=$("$helper" install 6.1.0-56-amd64 2>&1; "$helper" install 6.1.0-56-amd64 2>&1; "$helper" all --changed 2>&1)
[ "$(grep -c . <<<"$out")" = 1 ] && grep -q '6\.1\.0-56-amd64 has no mmtune hooks' <<<"$out"
case_ok "stock image reinstalled: image hook, headers hook and trigger give one line" $? "$out"

# The headers of the waiting kernel arrive (trigger): built, one line.
mkdir -p "$root/lib/modules/6.1.99-mmtune/build/include"; echo 'CONFIG_MMTUNE_HOOKS=y' >"$root/lib/modules/6.1.99-mmtune/build/.config"
out=$("$helper" all --changed 2>&1)
[ "$out" = 'mmtune-dkms: 6.1.99-mmtune: built, signed and installed mmtune 9.9 with DKMS' ] && [ "$(attempts 6.1.99-mmtune)" = 1 ]
case_ok "headers arrive for the waiting kernel: the trigger builds it, one line" $? "$out"

# status: every kernel, one line each, its state; exit 1 (a build failed).
kernel 6.1.93-mmtune noheaders hooks
kernel 6.1.92-mmtune headers hooks
out=$("$helper" status 2>&1); rc=$?
want='6.1.0-56-amd64 skipped (no hooks)
6.1.0-57-amd64 skipped (no hooks)
6.1.92-mmtune not built yet
6.1.93-mmtune waiting for headers
6.1.94-mmtune built
6.1.95-mmtune prebuilt
6.1.96-mmtune failed: dkms exit 10
6.1.97-mmtune skipped (declined)
6.1.98-mmtune built
6.1.99-mmtune built'
# Each output line reduced to the wanted prefix when it starts with it.
got=$(while read -r k rest; do
	w=$(grep "^$k " <<<"$want") && [[ "$k $rest" == "$w"* ]] && echo "$w" || echo "$k $rest"
done <<<"$out")
[ $rc = 1 ] && [ "$got" = "$want" ]
case_ok "status: one line for each of the 10 kernels with its state (built, prebuilt, skipped, waiting, failed, not built), exit 1" $? "exit $rc; $out"
rm -f "$fake/rc-6.1.96-mmtune"; "$helper" install 6.1.96-mmtune --retry 2>/dev/null; "$helper" install 6.1.92-mmtune 2>/dev/null
out=$("$helper" status 2>&1); rc=$?
[ $rc = 0 ] && grep -q '^6\.1\.96-mmtune  *built' <<<"$out" && grep -q '^6\.1\.92-mmtune  *built' <<<"$out"
case_ok "status after a successful retry: built, exit 0" $? "exit $rc; $out"

# 6.12's headers packages from bindeb-pkg and binrpm-pkg (linux-headers,
# kernel-devel) have include/config/auto.conf and no .config: read when
# there is no image (yet), for both lines' decisions.
headers_autoconf() {
	mkdir -p "$root/lib/modules/$1/build/include/config"
	echo "$2" >"$root/lib/modules/$1/build/include/config/auto.conf"
}
headers_autoconf 6.12.117-mmtune-cloud-amd64 'CONFIG_MMTUNE_HOOKS=y'
headers_autoconf 6.12.117-stock-cloud-amd64 'CONFIG_ZSWAP=y'
expect "6.12 headers with the hooks, auto.conf only, no image: built" 0 '^mmtune-dkms: 6\.12\.117-mmtune-cloud-amd64: built, signed and installed mmtune 9\.9 with DKMS$' yes -- install 6.12.117-mmtune-cloud-amd64
expect "6.12 stock headers, auto.conf only, no image: skipped" 0 '^mmtune-dkms: 6\.12\.117-stock-cloud-amd64 has no mmtune hooks' no -- install 6.12.117-stock-cloud-amd64
expect "6.12 stock headers, a second hook run: silent" 0 '' no -- install 6.12.117-stock-cloud-amd64

# Removed but not purged: the sources are gone, the hooks must be silent.
rm -rf "$root/usr/src/mmtune-9.9"
expect "removed, not purged: silent" 0 '' no -- install 6.1.98-mmtune
expect "removed, not purged: all is silent" 0 '' no -- all
# The /etc/kernel wrapper without the helper installed (as on this host
# when mmtune-dkms is not installed): silent, exit 0.
if [ ! -e /usr/lib/mmtune-dkms/mmtune-dkms-kernel ]; then
	n=$((n + 1))
	out=$("$repo/packaging/dkms/kernel-hook" 6.1.0-56-amd64 2>&1); rc=$?
	if [ $rc -eq 0 ] && [ -z "$out" ]; then echo "ok   /etc/kernel wrapper without the helper: silent, exit 0"
	else fails=$((fails + 1)); echo "FAIL /etc/kernel wrapper without the helper (exit $rc): $out"; fi
fi

echo "$((n - fails))/$n cases passed"
[ $fails -eq 0 ]
