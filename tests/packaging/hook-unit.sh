#!/bin/bash
# Unit test of packaging/dkms/mmtune-dkms-kernel (the decision behind the
# mmtune-dkms kernel hooks) on fake kernels under a scratch root, with a
# fake dkms that records its calls. Part of the quick packaging suite.
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
# $FAKE/rc-KVER (default 0); every call is logged.
cat >"$fake/bin/dkms" <<'SH'
#!/bin/sh
echo "dkms $*" >>"$FAKE/calls"
k=
prev=
for a in "$@"; do [ "$prev" = -k ] && k=$a; prev=$a; done
case "$1" in
status) [ -n "$k" ] && cat "$FAKE/status-$k" 2>/dev/null; exit 0 ;;
install) echo "fake dkms output for $k"; exit "$(cat "$FAKE/rc-$k" 2>/dev/null || echo 0)" ;;
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
expect "already installed" 0 '^mmtune-dkms: 6\.1\.94-mmtune: mmtune 9\.9 already installed$' no -- install 6.1.94-mmtune
expect "usage error" 2 'usage' no -- install

# The dkms output went to the log, not to the terminal.
n=$((n + 1))
if grep -q 'fake dkms output for 6.1.96-mmtune' "$root/var/log/mmtune-dkms.log"; then
	echo "ok   dkms output is in /var/log/mmtune-dkms.log"
else
	fails=$((fails + 1)); echo "FAIL dkms output is not in the log"
fi

# "all": every kernel with headers, one line each; --quiet-skip names only
# kernels it did something for.
n=$((n + 1))
: >"$fake/calls"
out=$("$helper" all 2>&1); rc=$?
if [ $rc -eq 0 ] && [ "$(grep -c '^mmtune-dkms: ' <<<"$out")" = 6 ] && ! grep -q 6.1.99-mmtune <<<"$out" &&
	[ "$(grep -c '^dkms install' "$fake/calls")" = 3 ]; then
	echo "ok   all: one line for each of the 6 kernels with headers, 3 builds"
else
	fails=$((fails + 1)); echo "FAIL all (exit $rc):"; echo "$out"
fi
n=$((n + 1))
out=$("$helper" all --quiet-skip 2>&1); rc=$?
if [ $rc -eq 0 ] && ! grep -qE 'no mmtune hooks|prebuilt|already installed' <<<"$out" &&
	grep -q '6.1.98-mmtune: built' <<<"$out"; then
	echo "ok   all --quiet-skip: silent about stock, prebuilt and installed kernels"
else
	fails=$((fails + 1)); echo "FAIL all --quiet-skip (exit $rc):"; echo "$out"
fi

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
