#!/bin/bash
# Fail if any artifact carries a private key. The one scanner of the tree:
# make repo runs it on everything it publishes, the packaging tests on
# every .deb, .rpm, source package and tarball the builds make.
#
#   packaging/repo/check-no-private-keys.sh [--list-dir DIR] ARTIFACT...
#
# ARTIFACT: .deb (data and control archive), .rpm and .src.rpm (rpm2cpio),
# .dsc (the files it lists, from its directory), tar archives (any
# compression) and single compressed files (.gz .xz .bz2 .zst); anything
# else is scanned as a plain file. What unpacking yields is unpacked again
# where it is itself an archive (the tarball in a source RPM or a .dsc, a
# .deb inside a tarball, a gzipped changelog), three levels deep: a key
# one archive further in is still a key. Every file is checked for
#   - a private key's name: signing_key.pem, *.key, *.priv
#   - a PEM private key marker in its contents: "-----BEGIN ... PRIVATE
#     KEY-----" (PKCS#8, RSA, EC, ENCRYPTED, OPENSSH, PGP ... BLOCK is
#     "PGP PRIVATE KEY BLOCK": matched too), binary files included
# A file inside a nested archive is named OUTER!INNER.
# One line per artifact ("<file>: N files, no private key") on stdout, one
# line per finding on stderr; exit 1 on any finding, 2 on an artifact that
# cannot be read. --list-dir DIR: each artifact's file list into
# DIR/<artifact>.list (the record of what was shipped).
#
# Allowed, by content hash and path (nothing trusts them, they are
# public): tools/testing/selftests/sgx/sign_key.pem, the SGX selftest's
# enclave signing key in the kernel source, which rpm-pkg's kernel-devel
# (a copy of the source tree) carries.
set -uo pipefail

allowed=(
	"1f6566d02247dc09d4dcb542ee2399522ceebf9b435ee00fe2053aa5582541e2 tools/testing/selftests/sgx/sign_key.pem"
)
marker='-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY( BLOCK)?-----'
# Suffixes unpacked again when found inside an artifact.
nested_re='\.(deb|rpm|dsc|tar|tgz|tar\.[a-z0-9]+|gz|xz|bz2|zst)$'

list_dir=''
if [ "${1:-}" = --list-dir ]; then list_dir=${2:?}; shift 2; mkdir -p "$list_dir"; fi
[ $# -gt 0 ] || { echo "usage: $0 [--list-dir DIR] ARTIFACT..." >&2; exit 2; }

is_allowed() {	# FILE PATH
	local a sum
	sum=$(sha256sum <"$1" | cut -d' ' -f1)
	for a in "${allowed[@]}"; do
		[ "$sum" = "${a%% *}" ] && [[ $2 == *"/${a#* }" ]] && return 0
	done
	return 1
}

# unpack FILE DIR: FILE's contents into DIR (created).
unpack() {
	local f=$1 d=$2 abs l
	abs=$(realpath "$f")
	mkdir -p "$d"
	case "${f##*/}" in
	*.deb)
		dpkg-deb --fsys-tarfile "$abs" | tar -xf - -C "$d" &&
			dpkg-deb -e "$abs" "$d/DEBIAN" ;;
	*.rpm)
		(cd "$d" && rpm2cpio "$abs" | cpio -idm --quiet --no-absolute-filenames) ;;
	*.dsc)
		# The files the .dsc lists, beside it.
		cp "$abs" "$d/" &&
		sed -n '/^Files:/,/^[^ ]/{s/^ [0-9a-f]\{32\} [0-9]* //p}' "$abs" | while read -r l; do
			cp "$(dirname "$abs")/$l" "$d/" || exit 1
		done ;;
	*.tar|*.tar.*|*.tgz)
		tar -xf "$abs" -C "$d" ;;
	*.gz) zcat "$abs" >"$d/$(basename "${f%.gz}")" ;;
	*.xz) xzcat "$abs" >"$d/$(basename "${f%.xz}")" ;;
	*.bz2) bzcat "$abs" >"$d/$(basename "${f%.bz2}")" ;;
	*.zst) zstd -qdc "$abs" >"$d/$(basename "${f%.zst}")" ;;
	*) cp -a "$abs" "$d/" ;;
	esac
}

rc=0
for art in "$@"; do
	[ -f "$art" ] || { echo "$art: not a file" >&2; rc=2; continue; }
	t=$(mktemp -d "${TMPDIR:-/tmp}/mmtune-keyscan.XXXXXX")
	if ! unpack "$art" "$t/0" 2>"$t/err"; then
		echo "$art: cannot unpack: $(head -c 300 "$t/err")" >&2; rm -rf "$t"; rc=2; continue
	fi
	rm -f "$t/err"
	# Archives inside: unpacked beside themselves into NAME.unpacked.
	for _ in 1 2 3; do
		nested=$(find "$t/0" -type f -regextype posix-extended -regex ".*$nested_re" |
			while read -r n; do [ -e "$n.unpacked" ] || echo "$n"; done)
		[ -n "$nested" ] || break
		while read -r n; do
			unpack "$n" "$n.unpacked" 2>/dev/null || {
				p=${n#"$t"/0}
				echo "$art: cannot unpack ${p//.unpacked\//!}" >&2; rc=2; }
		done <<<"$nested"
	done
	n=$(find "$t/0" -mindepth 1 -type f | wc -l)
	if [ -n "$list_dir" ]; then
		find "$t/0" -mindepth 1 -printf '/%P\n' | sed 's|\.unpacked/|!|g' | sort >"$list_dir/$(basename "$art").list"
	fi
	bad=0 allowed_here=0
	# One find and one grep over the whole tree (kernel-devel has ~70000
	# files): names, then contents; binary files are read as text (-a).
	while IFS= read -r -d '' f; do
		p=${f#"$t"/0}; p=${p//.unpacked\//!}
		if is_allowed "$f" "$p"; then
			allowed_here=$((allowed_here + 1))
			echo "$(basename "$art"): allowed: $p (a public test key of the kernel source)" >&2
			continue
		fi
		why=''
		case "${f##*/}" in signing_key.pem|*.key|*.priv) why="a private key's file name" ;; esac
		[ -f "$f" ] && grep -qaE -- "$marker" "$f" &&
			why="${why:+$why, }a PEM private key marker ($(grep -aoE -- "$marker" "$f" | head -n 1))"
		echo "$(basename "$art"): PRIVATE KEY: $p: $why" >&2
		bad=$((bad + 1))
	done < <({ find "$t/0" \( -name signing_key.pem -o -name '*.key' -o -name '*.priv' \) -print0
		grep -rlaEZ -- "$marker" "$t/0" 2>/dev/null; } | sort -zu)
	if [ $bad -eq 0 ]; then
		a=''; [ $allowed_here -eq 0 ] || a=" ($allowed_here allowed public test key)"
		echo "$(basename "$art"): $n files, no private key$a"
	else
		echo "$(basename "$art"): $n files, $bad with a private key"
		[ $rc -eq 2 ] || rc=1
	fi
	rm -rf "$t"
done
exit $rc
