#!/bin/bash
# Fail if any package carries a private key.
#
#   packaging/repo/check-no-private-keys.sh [--list-dir DIR] PACKAGE...
#
# PACKAGE: .deb or .rpm files. Each is unpacked (.deb: the data archive,
# dpkg-deb --fsys-tarfile, and the control archive; .rpm: rpm2cpio) and
# every file in it is checked for
#   - a name that is a private key's: signing_key.pem, *.key, *.priv
#   - a PEM private key marker in its contents: "-----BEGIN ... PRIVATE
#     KEY-----" (PKCS#8, RSA, EC, ENCRYPTED, OPENSSH), binary files too
# One line per package ("<file>: N files, no private key") on stdout, one
# line per finding on stderr; exit 1 on any finding, 2 on a package that
# cannot be read. --list-dir DIR: each package's file list into
# DIR/<package file>.list (the record of what was shipped).
#
# Allowed, by content hash and path (nothing trusts them, they are
# public): tools/testing/selftests/sgx/sign_key.pem, the SGX selftest's
# enclave signing key in the kernel source, which rpm-pkg's kernel-devel
# (a copy of the source tree) carries.
#
# Used by make repo (nothing with a key is published) and by the packaging
# tests (tests/packaging/lib.sh: no_private_keys) on every artifact.
set -uo pipefail

allowed=(
	"1f6566d02247dc09d4dcb542ee2399522ceebf9b435ee00fe2053aa5582541e2 tools/testing/selftests/sgx/sign_key.pem"
)
marker='-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----'

list_dir=''
if [ "${1:-}" = --list-dir ]; then list_dir=${2:?}; shift 2; mkdir -p "$list_dir"; fi
[ $# -gt 0 ] || { echo "usage: $0 [--list-dir DIR] PACKAGE..." >&2; exit 2; }

is_allowed() {	# FILE PATH
	local a sum
	sum=$(sha256sum <"$1" | cut -d' ' -f1)
	for a in "${allowed[@]}"; do
		[ "$sum" = "${a%% *}" ] && [[ $2 == *"/${a#* }" ]] && return 0
	done
	return 1
}

rc=0
for pkg in "$@"; do
	t=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-keyscan.XXXXXX")
	abs=$(realpath "$pkg")
	case "$pkg" in
	*.deb)
		mkdir -p "$t/data" "$t/control"
		{ dpkg-deb --fsys-tarfile "$pkg" | tar -xf - -C "$t/data" && dpkg-deb -e "$pkg" "$t/control/DEBIAN"; } 2>"$t/err" ;;
	*.rpm)
		mkdir -p "$t/data"
		(cd "$t/data" && rpm2cpio "$abs" | cpio -idm --quiet --no-absolute-filenames) 2>"$t/err" ;;
	*) false ;;
	esac || { echo "$pkg: cannot unpack: $(head -c 300 "$t/err" 2>/dev/null)" >&2; rm -rf "$t"; rc=2; continue; }
	n=$(find "$t/data" "$t/control" -mindepth 1 2>/dev/null | wc -l)
	if [ -n "$list_dir" ]; then
		find "$t/data" "$t/control" -mindepth 1 -printf '/%P\n' 2>/dev/null | sort >"$list_dir/$(basename "$pkg").list"
	fi
	bad=0 allowed_here=0
	# One grep and one find over the whole tree (kernel-devel has ~70000
	# files): names, then contents; binary files are read as text (-a).
	while IFS= read -r -d '' f; do
		p=${f#"$t"/}; p=/${p#*/}
		if is_allowed "$f" "$p"; then
			allowed_here=$((allowed_here + 1))
			echo "$(basename "$pkg"): allowed: $p (a public test key of the kernel source)" >&2
			continue
		fi
		why=''
		case "${f##*/}" in signing_key.pem|*.key|*.priv) why="a private key's file name" ;; esac
		[ -f "$f" ] && grep -qaE -- "$marker" "$f" &&
			why="${why:+$why, }a PEM private key marker ($(grep -aoE -- "$marker" "$f" | head -n 1))"
		echo "$(basename "$pkg"): PRIVATE KEY: $p: $why" >&2
		bad=$((bad + 1))
	done < <({ find "$t/data" "$t/control" \( -name signing_key.pem -o -name '*.key' -o -name '*.priv' \) -print0 2>/dev/null
		grep -rlaEZ -- "$marker" "$t/data" "$t/control" 2>/dev/null; } | sort -zu)
	if [ $bad -eq 0 ]; then
		a=''; [ $allowed_here -eq 0 ] || a=" ($allowed_here allowed public test key)"
		echo "$(basename "$pkg"): $n files, no private key$a"
	else
		echo "$(basename "$pkg"): $n files, $bad with a private key"
		rc=1
	fi
	rm -rf "$t"
done
exit $rc
