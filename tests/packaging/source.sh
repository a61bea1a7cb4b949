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

# untracked_never_ships: in a scratch git copy of the sources, an untracked
# packaging/repo/backup.asc holding a (throwaway) PGP secret key and an
# untracked module file are left out of every artifact, and the scan ran
# on each of the six; tracked, the key fails the build in the source RPM.
untracked_never_ships() {
	local t rc=0 out n
	t=$(mktemp -d)
	# shellcheck disable=SC2046 # the top-level paths, split
	git ls-files -z -- $(packaging/build.sh --sources) | xargs -0 cp --parents -t "$t"
	git -C "$t" init -q && git -C "$t" add -A && git -C "$t" -c user.name=t -c user.email=t@localhost commit -qm t
	mkdir -m 700 "$t/gpg"
	GNUPGHOME=$t/gpg gpg -q --batch --passphrase '' --quick-gen-key 'backup test <t@localhost>' ed25519 sign never 2>/dev/null
	GNUPGHOME=$t/gpg gpg -q --batch --armor --export-secret-keys >"$t/packaging/repo/backup.asc"
	gpgconf --homedir "$t/gpg" --kill all 2>/dev/null; rm -rf "$t/gpg"
	echo '/* untracked */' >"$t/module/scratch.c"
	out=$("$t/packaging/build.sh" 2>&1) || { echo "$out" | tail -n 20; rm -rf "$t"; return 1; }
	grep -E 'left out|no private key|PRIVATE' <<<"$out"
	grep -q 'left out: 2 untracked files' <<<"$out" || { echo "no line about the 2 untracked files"; rc=1; }
	n=$(grep -cE '^(mmtune[-_][^ ]*\.(deb|rpm|dsc)): [0-9]+ files, no private key$' <<<"$out")
	[ "$n" -eq 6 ] || { echo "$n artifacts scanned, want 6"; rc=1; }
	[ "$(find "$t/build/packaging/contents" -name '*.list' | wc -l)" -eq 6 ] || { echo "not 6 file lists"; rc=1; }
	if grep -lE 'backup\.asc|scratch\.c' "$t"/build/packaging/contents/*.list; then
		echo "an untracked file shipped (above)"; rc=1
	fi
	grep -q 'module/main.c' "$t/build/packaging/contents/mmtune_$(packaging/version.sh).dsc.list" || { echo "the .dsc list lacks module/main.c"; rc=1; }
	git -C "$t" add packaging/repo/backup.asc
	if out=$("$t/packaging/build.sh" rpm 2>&1); then echo "the build passed with a tracked secret key"; rc=1; fi
	grep -E 'PRIVATE KEY|error' <<<"$out"
	grep -qE "src\.rpm: PRIVATE KEY: .*packaging/repo/backup\.asc: a private key in text form" <<<"$out" || rc=1
	rm -rf "$t"
	return $rc
}
