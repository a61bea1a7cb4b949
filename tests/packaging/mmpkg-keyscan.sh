#!/bin/bash
# mmpkg_scan_private_keys ARTIFACT...: fail when a package or source
# artifact carries a private key, by name or by content. Standalone and
# reusable (no other test library needed): source this file and call the
# function, or run the file with the artifacts as arguments.
#
# Understands .deb (data and control), .rpm and .src.rpm, .dsc (the files
# it lists, from the same directory), tar archives (any compression) and
# plain files; what it unpacks is searched again (a tarball in a source
# RPM, a .deb in a tarball), three levels deep, and single compressed files
# (.gz, .xz, .bz2, .zst: man pages, changelogs) are searched decompressed.
# A key is:
#   - a file named *.pem, *.key or *.priv (certificates go as .x509/.der/
#     .crt: a .pem may hold a key, so none is allowed);
#   - a PEM private key block anywhere, text or binary file:
#     "-----BEGIN ... PRIVATE KEY" (PKCS#8, RSA, EC, ENCRYPTED, OPENSSH,
#     and "PGP PRIVATE KEY BLOCK").
# Prints one line per artifact (what was scanned, or each key found);
# returns 1 when a key was found or an artifact could not be read.

# _mmpkg_unpack FILE DIR: FILE's contents into DIR (created).
_mmpkg_unpack() {
	local f=$1 d=$2 l
	mkdir -p "$d"
	case "${f##*/}" in
	*.deb)
		dpkg-deb -R "$f" "$d" ;;
	*.rpm)
		(cd "$d" && rpm2cpio "$f" | cpio -idm --quiet --no-absolute-filenames) ;;
	*.dsc)
		# The files the .dsc lists, beside it.
		sed -n '/^Files:/,/^[^ ]/{s/^ [0-9a-f]\{32\} [0-9]* //p}' "$f" | while read -r l; do
			cp "$(dirname "$f")/$l" "$d/" || exit 1
		done ;;
	*.tar|*.tar.*|*.tgz)
		tar -xf "$f" -C "$d" ;;
	*.gz) zcat "$f" >"$d/$(basename "${f%.gz}")" ;;
	*.xz) xzcat "$f" >"$d/$(basename "${f%.xz}")" ;;
	*.bz2) bzcat "$f" >"$d/$(basename "${f%.bz2}")" ;;
	*.zst) zstd -qdc "$f" >"$d/$(basename "${f%.zst}")" ;;
	*)
		cp -a "$f" "$d/" ;;
	esac
}

mmpkg_scan_private_keys() {
	local f a tmp rc=0 found n nested
	for f in "$@"; do
		a=$(realpath "$f" 2>/dev/null)
		[ -f "$a" ] || { echo "$f: not a file"; rc=1; continue; }
		tmp=$(mktemp -d)
		if ! _mmpkg_unpack "$a" "$tmp/0" 2>"$tmp/err"; then
			echo "$f: cannot unpack: $(head -n 3 "$tmp/err")"; rc=1; rm -rf "$tmp"; continue
		fi
		rm -f "$tmp/err"
		# Unpack what was unpacked (into NAME.unpacked), three levels deep.
		for _ in 1 2 3; do
			nested=$(find "$tmp" -type f \( -name '*.deb' -o -name '*.rpm' -o -name '*.dsc' -o -name '*.tar' \
				-o -name '*.tar.*' -o -name '*.tgz' -o -name '*.gz' -o -name '*.xz' -o -name '*.bz2' \
				-o -name '*.zst' \) | while read -r n; do [ -e "$n.unpacked" ] || echo "$n"; done)
			[ -n "$nested" ] || break
			while read -r n; do
				_mmpkg_unpack "$n" "$n.unpacked" 2>/dev/null ||
					{ echo "$f: cannot unpack ${n#"$tmp"/0/}"; rc=1; }
			done <<<"$nested"
		done
		found=$(find "$tmp" \( -name '*.pem' -o -name '*.key' -o -name '*.priv' \) -printf 'name: %P\n' | sed 's|^name: 0/|name: |'
			grep -rlaE -e '-----BEGIN [A-Z0-9 ]*PRIVATE KEY' "$tmp" | sed "s|^$tmp/0/|content: |")
		if [ -n "$found" ]; then
			sed "s|^|$f: private key? |; s|\.unpacked/|!|g" <<<"$found"
			rc=1
		else
			echo "$f: no private key ($(find "$tmp" -type f | wc -l) files scanned)"
		fi
		rm -rf "$tmp"
	done
	return $rc
}

# Run as a script: scan the arguments.
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	[ $# -gt 0 ] || { echo "usage: $0 ARTIFACT..." >&2; exit 2; }
	mmpkg_scan_private_keys "$@"
fi
