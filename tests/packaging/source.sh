# shellcheck shell=bash
# Source packages of mmtune (the .dsc and the source RPM), sourced by
# quick.sh: each function is one check. They rebuild the binary packages
# from the source artifacts alone, in a clean directory, and compare them
# with the packages packaging/build.sh made from the tree.

# src_artifacts_ok VER: the artifacts exist and are listed: exactly the
# .dsc, its tarball and the source RPM in out/source (nothing of them in
# the binary directories a repository publishes), the .dsc listing the
# tarball, the source RPM with the spec (version written in) and Source0.
src_artifacts_ok() {
	local ver=$1 s=build/packaging/out/source rc=0 f
	ls -l "$s"
	[ "$(find "$s" -mindepth 1 -printf '%f\n' | sort | tr '\n' ' ')" = "mmtune-$ver-1.src.rpm mmtune_$ver.dsc mmtune_$ver.tar.xz " ] ||
		{ echo "out/source does not hold exactly the .dsc, its tarball and the source RPM"; rc=1; }
	for f in "$s/mmtune_$ver.dsc" "$s/mmtune_$ver.tar.xz" "$s/mmtune-$ver-1.src.rpm"; do
		[ -s "$f" ] || { echo "missing: $f"; rc=1; }
	done
	[ $rc -eq 0 ] || return 1
	ls build/packaging/out/deb/*.dsc build/packaging/out/rpm/*.src.rpm 2>/dev/null && { echo "source artifacts among the binaries (above)"; rc=1; }
	grep -qx 'Format: 3.0 (native)' "$s/mmtune_$ver.dsc" || { echo "not 3.0 (native)"; rc=1; }
	grep -qx 'Binary: mmtune-dkms, mmtune' "$s/mmtune_$ver.dsc" || { echo ".dsc does not name both binary packages"; rc=1; }
	grep -q " mmtune_$ver.tar.xz\$" "$s/mmtune_$ver.dsc" || { echo ".dsc does not list mmtune_$ver.tar.xz"; rc=1; }
	[ "$(rpm -qpl "$s/mmtune-$ver-1.src.rpm" | sort | tr '\n' ' ')" = "mmtune-$ver.tar.gz mmtune.spec " ] ||
		{ echo "source RPM holds: $(rpm -qpl "$s/mmtune-$ver-1.src.rpm" | tr '\n' ' ')"; rc=1; }
	f=$(rpm2cpio "$s/mmtune-$ver-1.src.rpm" | cpio -i --quiet --to-stdout mmtune.spec)
	grep -qx "%global mmtune_version $ver" <<<"$f" ||
		{ echo "the source RPM's spec does not have the version written in"; rc=1; }
	return $rc
}

# debs_same A B: the same package: control fields, maintainer scripts,
# file list with modes and owners, contents (md5sums).
debs_same() {
	local t rc=0
	t=$(mktemp -d)
	dpkg-deb -e "$1" "$t/a"; dpkg-deb -e "$2" "$t/b"
	diff -r "$t/a" "$t/b" || rc=1
	diff <(dpkg-deb -c "$1" | awk '{ print $1, $2, $6 }') <(dpkg-deb -c "$2" | awk '{ print $1, $2, $6 }') || rc=1
	rm -rf "$t"
	return $rc
}

# dsc_rebuild_ok VER: dpkg-source -x of the .dsc in an empty directory,
# dpkg-buildpackage -b there: the same two .debs as build.sh's.
dsc_rebuild_ok() {
	local ver=$1 d=build/packaging/out/deb s=build/packaging/out/source t rc=0 p
	t=$(mktemp -d)
	cp "$s/mmtune_$ver.dsc" "$s/mmtune_$ver.tar.xz" "$t/"
	(cd "$t" && dpkg-source -x "mmtune_$ver.dsc" src >"$t/x.log" 2>&1) || { cat "$t/x.log"; rm -rf "$t"; return 1; }
	if ! (cd "$t/src" && dpkg-buildpackage -b -us -uc) >"$t/b.log" 2>&1; then
		tail -n 20 "$t/b.log"; rm -rf "$t"; return 1
	fi
	for p in mmtune mmtune-dkms; do
		if [ -f "$t/${p}_${ver}_all.deb" ] && debs_same "$d/${p}_${ver}_all.deb" "$t/${p}_${ver}_all.deb"; then
			echo "${p}_${ver}_all.deb: rebuilt from the .dsc, same control, scripts, files and contents"
		else
			echo "${p}_${ver}_all.deb: the rebuild differs (or is missing)"; rc=1
		fi
	done
	rm -rf "$t"
	return $rc
}

# rpm_facts RPM: what makes two builds of a package the same.
rpm_facts() {
	rpm -qp --qf '[%{FILEMODES:perms} %{FILEUSERNAME} %{FILEGROUPNAME} %{FILEMD5S} %{FILENAMES}\n]' "$1"
	rpm -qp --requires --provides --recommends --conflicts "$1"
	rpm -qp --scripts --triggers "$1"
}

# srpm_rebuild_ok VER: rpmbuild --rebuild of the source RPM (with this
# host's options, packaging/build.sh --rpmbuild, and no --define of the
# version): the same two .rpms as build.sh's.
srpm_rebuild_ok() {
	local ver=$1 r=build/packaging/out/rpm t rc=0 p
	t=$(mktemp -d)
	cp "build/packaging/out/source/mmtune-$ver-1.src.rpm" "$t/"
	if ! packaging/build.sh --rpmbuild --define "_topdir $t/top" --rebuild "$t/mmtune-$ver-1.src.rpm" >"$t/b.log" 2>&1; then
		tail -n 20 "$t/b.log"; rm -rf "$t"; return 1
	fi
	for p in mmtune mmtune-dkms; do
		if [ -f "$t/top/RPMS/noarch/$p-$ver-1.noarch.rpm" ] &&
			diff <(rpm_facts "$r/$p-$ver-1.noarch.rpm") <(rpm_facts "$t/top/RPMS/noarch/$p-$ver-1.noarch.rpm"); then
			echo "$p-$ver-1.noarch.rpm: rebuilt from the source RPM, same files, contents, dependencies and scriptlets"
		else
			echo "$p-$ver-1.noarch.rpm: the rebuild differs (or is missing)"; rc=1
		fi
	done
	rm -rf "$t"
	return $rc
}

# keyscan_selftest: the scanner (packaging/repo/check-no-private-keys.sh)
# finds a key by name and by PEM marker, nested in archives (a fake key:
# the marker and no key material), and passes a clean archive.
keyscan_selftest() {
	local t out rc=0 scan=packaging/repo/check-no-private-keys.sh
	t=$(mktemp -d)
	mkdir -p "$t/a/sub" "$t/b"
	printf -- '-----BEGIN %s-----\nnot a key\n-----END %s-----\n' "EC PRIVATE KEY" "EC PRIVATE KEY" >"$t/a/sub/notes"
	gzip "$t/a/sub/notes"
	tar -czf "$t/marker.tar.gz" -C "$t" a
	: >"$t/b/signing_key.priv"
	tar -cJf "$t/b.tar.xz" -C "$t" b
	tar -cf "$t/name.tar" -C "$t" b.tar.xz
	echo clean >"$t/clean.txt"; tar -czf "$t/clean.tar.gz" -C "$t" clean.txt
	out=$($scan "$t/marker.tar.gz" 2>&1) && rc=1
	echo "$out"; grep -q 'PRIVATE KEY: /a/sub/notes.gz!notes: a PEM private key marker' <<<"$out" || rc=1
	out=$($scan "$t/name.tar" 2>&1) && rc=1
	echo "$out"; grep -q "PRIVATE KEY: /b.tar.xz!b/signing_key.priv: a private key's file name" <<<"$out" || rc=1
	$scan "$t/clean.tar.gz" || rc=1
	rm -rf "$t"
	return $rc
}
