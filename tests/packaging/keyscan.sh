# shellcheck shell=bash
# The private key scanner (packaging/repo/check-no-private-keys.py) against
# doctored packages, sourced by quick.sh: throwaway keys made at test time
# (openssl, ssh-keygen, gpg; none is ever committed) in every encoding,
# under innocent names, inside every archive format a package can hold.

scan=packaging/repo/check-no-private-keys.py

# keyscan_keys DIR: DIR/private/NAME, one private key per encoding, and
# DIR/public/NAME, public keys and certificates that packages ship.
keyscan_keys() {
	local d=$1 p=$1/private q=$1/public
	mkdir -p "$p" "$q" "$d/gpg"
	chmod 700 "$d/gpg"
	openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:1024 -out "$p/pkcs8.pem" 2>/dev/null
	openssl pkcs8 -topk8 -nocrypt -in "$p/pkcs8.pem" -outform DER -out "$p/pkcs8.der"
	openssl rsa -in "$p/pkcs8.pem" -traditional -outform DER -out "$p/pkcs1.der" 2>/dev/null
	openssl pkcs8 -topk8 -v2 aes-256-cbc -passout pass:x -in "$p/pkcs8.pem" -outform DER -out "$p/pkcs8-encrypted.der"
	openssl ecparam -genkey -name prime256v1 -noout -outform DER -out "$p/ec-sec1.der"
	openssl genpkey -algorithm ed25519 -outform DER -out "$p/ed25519-pkcs8.der"
	openssl dsaparam -genkey -outform DER 1024 2>/dev/null | openssl dsa -inform DER -outform DER -out "$p/dsa.der" 2>/dev/null
	openssl req -new -x509 -key "$p/pkcs8.pem" -subj /CN=keyscan-test -days 1 -out "$q/cert.pem"
	openssl x509 -in "$q/cert.pem" -outform DER -out "$q/cert.der"
	openssl pkcs12 -export -inkey "$p/pkcs8.pem" -in "$q/cert.pem" -passout pass:x -out "$p/store.p12"
	openssl pkey -in "$p/pkcs8.pem" -pubout -out "$q/pub.pem"
	openssl pkey -in "$p/pkcs8.pem" -pubout -outform DER -out "$q/pub.der"
	ssh-keygen -q -t ed25519 -N '' -C keyscan-test -f "$p/openssh"
	mv "$p/openssh.pub" "$q/openssh.pub"
	sed '1d;$d' "$p/openssh" | base64 -d >"$p/openssh.bin"
	GNUPGHOME=$d/gpg gpg -q --batch --passphrase '' --quick-gen-key 'keyscan test <t@localhost>' ed25519 sign never 2>/dev/null
	GNUPGHOME=$d/gpg gpg -q --batch --export-secret-keys 'keyscan test' >"$p/pgp-secret.gpg"
	# An RSA secret key as well as the ed25519 one.
	GNUPGHOME=$d/gpg gpg -q --batch --passphrase '' --quick-gen-key 'keyscan rsa <r@localhost>' rsa2048 sign never 2>/dev/null
	GNUPGHOME=$d/gpg gpg -q --batch --export-secret-keys 'keyscan rsa' >"$p/pgp-rsa-secret.gpg"
	GNUPGHOME=$d/gpg gpg -q --batch --armor --export-secret-keys >"$p/pgp-secret.asc"
	GNUPGHOME=$d/gpg gpg -q --batch --export >"$q/keyring.gpg"
	GNUPGHOME=$d/gpg gpg -q --batch --armor --export >"$q/keyring.asc"
	gpgconf --homedir "$d/gpg" --kill all 2>/dev/null
	base64 -w0 "$p/pkcs8.der" >"$p/pkcs8-der.b64"
	base64 -w0 "$p/ed25519-pkcs8.der" >"$p/ed25519-der.b64"
	base64 -w0 "$p/pkcs8.pem" >"$p/pkcs8-pem.b64"
	base64 "$p/pgp-secret.gpg" >"$p/pgp-secret.b64"
	{ echo 'key: |'; base64 -w 60 "$p/ec-sec1.der" | sed 's/^/  /'; } >"$p/ec-der-wrapped.yaml"
	base64 -w0 "$q/cert.der" >"$q/cert-der.b64"
	# Innocent names: nothing but the contents tells.
	local f b
	for f in "$p"/* "$q"/*; do
		b=${f##*/}; mv "$f" "${f%/*}/${b%%.*}-${b#*.}.dat"
	done
}

# keyscan_deb DIR OUT [dpkg-deb options]: a .deb of the tree DIR.
keyscan_deb() {
	mkdir -p "$1/DEBIAN"
	printf 'Package: keyscan-test\nVersion: 1\nArchitecture: all\nMaintainer: t <t@localhost>\nDescription: t\n' >"$1/DEBIAN/control"
	dpkg-deb "${@:3}" --root-owner-group -b "$1" "$2" >/dev/null
}

# keyscan_rpm DIR OUT [rpmbuild options]: an .rpm of the tree DIR (its
# /usr/share/keyscan-test).
keyscan_rpm() {
	local t
	t=$(mktemp -d)
	cat >"$t/k.spec" <<SPEC
Name: keyscan-test
Version: 1
Release: 1
Summary: t
License: none
BuildArch: noarch
%description
t
%install
mkdir -p %{buildroot}/usr/share
cp -a $1/usr/share/keyscan-test %{buildroot}/usr/share/
%files
/usr/share/keyscan-test
SPEC
	rpmbuild -bb --define "_topdir $t" "${@:3}" "$t/k.spec" >"$t/log" 2>&1 || { cat "$t/log"; rm -rf "$t"; return 1; }
	mv "$t"/RPMS/noarch/*.rpm "$2"
	rm -rf "$t"
}

# keyscan_expect OUT-OF-SCAN RC PATH...: exit 1 and one finding per PATH.
keyscan_expect() {
	local out=$1 rc=$2 p bad=0
	shift 2
	[ "$rc" -eq 1 ] || { echo "scanner exit $rc, want 1"; bad=1; }
	for p in "$@"; do
		grep -qF "PRIVATE KEY: $p: " <<<"$out" || { echo "not found: $p"; bad=1; }
	done
	return $bad
}

# keyscan_encodings: a .deb and an .rpm holding a private key of every
# encoding, each under an innocent name, and a file under a private key's
# name: each one is found in both.
keyscan_encodings() {
	local t out rc bad=0 paths=() f
	t=$(mktemp -d)
	keyscan_keys "$t/k"
	mkdir -p "$t/tree/usr/share/keyscan-test"
	cp "$t"/k/private/* "$t/tree/usr/share/keyscan-test/"
	for f in "$t"/k/private/*; do paths+=("/usr/share/keyscan-test/${f##*/}"); done
	# A key's name alone is enough.
	echo 'no key inside' >"$t/tree/usr/share/keyscan-test/signing_key.pem"
	paths+=(/usr/share/keyscan-test/signing_key.pem)
	keyscan_deb "$t/tree" "$t/enc.deb"
	keyscan_rpm "$t/tree" "$t/enc.rpm" || { rm -rf "$t"; return 1; }
	echo "${#paths[@]} files: $(cd "$t/k/private" && echo *) signing_key.pem"
	for f in "$t/enc.deb" "$t/enc.rpm"; do
		out=$($scan "$f" 2>&1); rc=$?
		echo "$out"
		keyscan_expect "$out" $rc "${paths[@]}" || bad=1
		[ "$(grep -c 'PRIVATE KEY: ' <<<"$out")" -eq ${#paths[@]} ] || { echo "not one finding per key"; bad=1; }
	done
	rm -rf "$t"
	return $bad
}

# keyscan_containers: one DER PKCS#8 key under an innocent name, inside
# each archive format: every package is caught, the key named.
keyscan_containers() {
	local t k d out rc bad=0 c name pkg path
	t=$(mktemp -d)
	keyscan_keys "$t/k"
	k=$t/k/private/pkcs8-der.dat
	d=$t/tree/usr/share/keyscan-test
	# NAME PACKAGE EXPECTED-PATH, built below
	local cases=()
	mk() { rm -rf "$t/tree"; mkdir -p "$d"; }
	mk; cp "$k" "$d/x.dat"; keyscan_deb "$t/tree" "$t/gz.deb" -Zgzip
	cases+=("deb, data.tar.gz|$t/gz.deb|/usr/share/keyscan-test/x.dat")
	keyscan_deb "$t/tree" "$t/zst.deb" -Zzstd
	cases+=("deb, data.tar.zst|$t/zst.deb|/usr/share/keyscan-test/x.dat")
	keyscan_rpm "$t/tree" "$t/xz.rpm" --define '_binary_payload w2.xzdio'
	cases+=("rpm, xz cpio payload|$t/xz.rpm|/usr/share/keyscan-test/x.dat")
	keyscan_rpm "$t/tree" "$t/zst.rpm" --define '_binary_payload w3.zstdio'
	cases+=("rpm, zstd cpio payload|$t/zst.rpm|/usr/share/keyscan-test/x.dat")
	mk; (cd "$t/k/private" && cp pkcs8-der.dat x.dat && zip -q "$d/bundle.bin" x.dat && rm x.dat)
	keyscan_deb "$t/tree" "$t/zip.deb"
	cases+=("zip under an innocent name in a deb|$t/zip.deb|/usr/share/keyscan-test/bundle.bin!x.dat")
	mk; mkdir -p "$t/w/pkg"; cp "$k" "$t/w/pkg/data"; (cd "$t/w" && zip -qr "$d/pkg-1.0-py3-none-any.whl" pkg)
	keyscan_rpm "$t/tree" "$t/whl.rpm"
	cases+=("wheel in an rpm|$t/whl.rpm|/usr/share/keyscan-test/pkg-1.0-py3-none-any.whl!pkg/data")
	mk; tar -C "$t/w" -cf "$t/inner.tar" pkg; tar -C "$t" -czf "$d/outer.tar.gz" inner.tar
	keyscan_deb "$t/tree" "$t/tar.deb"
	cases+=("tar in a tar.gz in a deb|$t/tar.deb|/usr/share/keyscan-test/outer.tar.gz!inner.tar!pkg/data")
	for c in gzip xz zstd; do
		mk; $c -c "$k" >"$d/blob"; keyscan_deb "$t/tree" "$t/$c.deb"
		cases+=("$c single file in a deb|$t/$c.deb|/usr/share/keyscan-test/blob!blob")
	done
	mk; cp "$k" "$d/x.dat"; keyscan_deb "$t/tree" "$t/inner.deb"; tar -C "$t" -cJf "$t/debs.tar.xz" inner.deb
	cases+=("deb in a tar.xz|$t/debs.tar.xz|/inner.deb!usr/share/keyscan-test/x.dat")
	mk; cp "$k" "$d/x.dat"; keyscan_deb "$t/tree" "$t/ctl.deb"; cp "$k" "$t/tree/DEBIAN/x.dat"
	dpkg-deb --root-owner-group -b "$t/tree" "$t/ctl.deb" >/dev/null 2>&1
	cases+=("deb control archive|$t/ctl.deb|/DEBIAN/x.dat")
	for c in "${cases[@]}"; do
		IFS='|' read -r name pkg path <<<"$c"
		out=$($scan "$pkg" 2>&1); rc=$?
		if keyscan_expect "$out" $rc "$path" >/dev/null; then echo "caught: $name: $(grep 'PRIVATE KEY' <<<"$out")"
		else echo "MISSED: $name (exit $rc): $out"; bad=1; fi
	done
	rm -rf "$t"
	return $bad
}

# keyscan_clean: public keys and certificates (PEM, DER, base64, OpenSSH,
# OpenPGP keyrings), plain and zipped, in a .deb and an .rpm: no finding.
keyscan_clean() {
	local t rc=0 f
	t=$(mktemp -d)
	keyscan_keys "$t/k"
	mkdir -p "$t/tree/usr/share/keyscan-test"
	cp "$t"/k/public/* "$t/tree/usr/share/keyscan-test/"
	(cd "$t/k/public" && zip -q "$t/tree/usr/share/keyscan-test/public.zip" ./*)
	keyscan_deb "$t/tree" "$t/clean.deb"
	keyscan_rpm "$t/tree" "$t/clean.rpm" || { rm -rf "$t"; return 1; }
	echo "public material: $(cd "$t/k/public" && echo *)"
	for f in "$t/clean.deb" "$t/clean.rpm"; do
		$scan "$f" || rc=1
	done
	rm -rf "$t"
	return $rc
}
